import Foundation
import TallyCore
import TallyLog
import TallyStore

/// Queries on a replica's views, shaped once for the CLI and the API alike: the same filters,
/// limits and JSON (`ViewJSON`). Reading needs no writer lock, so a CLI query runs beside a
/// serving `tally serve`.
public struct LedgerViews: Sendable {
    /// The views, now or as of `asOfIndex` (Store's queries).
    let store: Views
    /// The log index every query answers as of (`asOf(_:warn:)`); nil for the views as they are.
    public var asOfIndex: UInt64? { store.asOfIndex }
    /// The replica.
    var directory: DataDirectory { store.directory }

    /// Over open views.
    init(projector: Projector) { store = Views(projector) }

    private init(store: Views) { self.store = store }

    /// The same queries, answered as the views stood at `point` on this replica (at most as
    /// they stand now): from the latest good snapshot at or before it plus the events after
    /// it (`AsOfViews`). `warn` hears of a damaged snapshot that was passed over.
    public func asOf(_ point: AsOf, warn: @escaping @Sendable (String) -> Void) throws -> LedgerViews {
        let now = try store.checkpoint()
        let index: UInt64
        switch point {
        case .index(let wanted): index = min(wanted, now)
        case .endOfSecond(let second): index = min(try store.index(atEndOf: second), now)
        }
        return LedgerViews(store: store.asOf(index: index, warn: warn))
    }

    /// Opens the views of `directory` for reading and brings them up to date with the log.
    public static func open(_ directory: DataDirectory) throws -> LedgerViews {
        let projector = try Projector(directory: directory)
        try projector.catchUp()
        return LedgerViews(projector: projector)
    }

    /// A page of expenses as JSON (`{"items": [...], "nextCursor": ...}`), written straight from
    /// the rows (`ViewRecordJSON`): what the API answers and `expenses list --json` prints.
    public func expensesPageJSON(_ query: ExpenseQuery) throws -> JSONText {
        let isHeld = isAttachmentHeld
        let page = try store.expensesJSON(query.filter, isHeld: isHeld)
        var out = Array(#"{"items":"#.utf8)
        out.reserveCapacity(page.items.count + 100)
        out.append(contentsOf: page.items)
        out.append(contentsOf: #","nextCursor":"#.utf8)
        if page.count == query.filter.limit, let last = page.last {
            JSONText.string(ExpenseQuery.cursor(dateMillis: last.dateMillis, id: last.id)).write(to: &out)
        } else {
            out.append(contentsOf: "null".utf8)
        }
        out.append(UInt8(ascii: "}"))
        return .raw(String(decoding: out, as: UTF8.self))
    }

    /// One page of expenses, newest first, and the cursor of the next page.
    public func expenses(_ query: ExpenseQuery) throws -> (rows: [ExpenseRow], nextCursor: String?) {
        let rows = try store.expenses(query.filter)
        return (rows, query.nextCursor(after: rows))
    }

    /// Whether this replica holds an attachment's blob (for `missingAttachments`).
    public func isAttachmentHeld(_ digest: String) -> Bool {
        (try? BlobStore(directory: directory).size(of: digest)) != nil
    }

    /// An entity as JSON; nil if there is none.
    public func entityJSON(_ type: EntityType, id: UUID) throws -> JSONText? {
        let id = id.lowercased
        switch type {
        case .expense: return try store.expenseJSON(id: id, isHeld: isAttachmentHeld)
        case .todo: return try store.todoJSON(id: id, isHeld: isAttachmentHeld)
        case .category: return try store.category(id: id).map { ViewJSON.category($0, depth: 0) }
        case .budget: return try store.budgetJSON(id: id)
        case .account: return try store.accountJSON(id: id)
        case .transfer: return try store.transferJSON(id: id)
        case .settlement: return try store.settlementJSON(id: id)
        case .line: return try store.lineJSON(id: id)
        case .recurring: return try recurringRuleEntities().first { $0.id.description == id }.map { try Self.ruleJSON($0) }
        case .rule: return try store.liveEntities(.rule).first { $0.id.description == id }.map(Self.ruleEntityJSON)
        case .rate: return try rates().first { if case .object(let fields) = $0, case .string(id)? = fields.first?.1 { true } else { false } }
        case .setting, .importBatch: return nil
        }
    }

    /// Categories as a tree (parents before children, with depth).
    public func categoryTree() throws -> [(category: CategoryRow, depth: Int)] {
        try store.categoryTree()
    }

    /// Every to-do.
    public func todos() throws -> [TodoRow] { try store.todos() }

    /// One expense, to-do or category as its row; nil when there is none (or it was deleted).
    public func expense(id: UUID) throws -> ExpenseRow? { try store.expense(id: id.lowercased) }
    public func todo(id: UUID) throws -> TodoRow? { try store.todo(id: id.lowercased) }
    public func category(id: UUID) throws -> CategoryRow? { try store.category(id: id.lowercased) }

    /// Every setting.
    public func settings() throws -> [SettingRow] { try store.settings() }

    /// One setting's value as canonical JSON text; nil if there is none.
    public func settingValue(_ key: String) throws -> String? { try store.setting(key: key)?.value }

    /// One setting as JSON; nil if there is none.
    public func setting(_ key: String) throws -> JSONText? {
        try store.setting(key: key).map(ViewJSON.setting)
    }

    /// A month's totals, by category and by payment (`month` checked as `YYYY-MM`); with
    /// `category`, spending by that category's children (a merged duplicate's id stands for its
    /// winner); `byBill`, card purchases in the month their bill is due.
    public func summary(month: String, category: String? = nil, byBill: Bool = false) throws -> MonthSummary {
        let month = try ExpenseQuery.month(month)
        if let category, UUID(uuidString: category) == nil { throw ValidationError(field: "category", "must be a category id (a UUID)") }
        var schedules: [String: CardSchedule] = [:]
        if byBill { schedules = try cardSchedules(of: try store.cardIDs()) }
        guard let summary = try store.summary(month: month, category: category?.lowercased(), byBill: byBill, schedules: schedules) else {
            throw ValidationError(field: "category", "no category \(category ?? "")", kind: .notFound)
        }
        return summary
    }

    /// Every live budget, as written (`month` nil), or the budgets that apply to `month` with
    /// what was spent against each.
    public func budgets() throws -> [BudgetRow] { try store.budgets() }

    public func budgetStatuses(month: String) throws -> [BudgetStatus] {
        let month = try ExpenseQuery.month(month)
        return try store.budgetStatuses(month: month)
    }

    /// Every live recurring rule's merged state, by id.
    public func recurringRuleEntities() throws -> [LedgerState.Entity] {
        try store.liveEntities(.recurring)
    }

    /// A rule as JSON: its fields, and the next occurrence days after today.
    public static func ruleJSON(_ entity: LedgerState.Entity, now: DateTime = .nowHere) throws -> JSONText {
        let rule = try? RecurringRule(entity)  // a rule that cannot be read (a peer's) shows with no next days
        var fields: [(String, JSONText)] = [("id", .string(entity.id.description))] + EntitySpec.recurring.fieldsJSON(of: entity)
        fields.append(("next", .array((rule?.next(now: now) ?? []).map(JSONText.string))))
        return .object(fields)
    }

    /// Every categorisation rule, as JSON.
    public func rules() throws -> [JSONText] {
        try store.liveEntities(.rule).map(Self.ruleEntityJSON)
    }

    /// A categorisation rule as JSON: its id and fields (tags an empty list when none).
    static func ruleEntityJSON(_ entity: LedgerState.Entity) -> JSONText {
        .object([("id", .string(entity.id.description))] + EntitySpec.rule.fieldsJSON(of: entity))
    }

    /// Every category merged into another (a duplicate by name and parent), with why.
    public func categoryMerges() throws -> [CategoryMergeRow] {
        try store.categoryMerges()
    }

    /// Every month's totals per currency.
    public func monthlyTotals() throws -> [(month: String, total: MonthSummary.Total)] {
        try store.monthlyTotals()
    }

    /// The conflict journal, optionally of one entity.
    public func conflicts(entity: String?) throws -> [ConflictRow] {
        try store.conflicts(entityID: entity)
    }

    /// An entity's history: every event that touched it, oldest first, and the category it
    /// was merged into, if it is a merged duplicate (a merge is never a silent delete).
    public func audit(_ id: EntityID) throws -> (events: [LoggedEvent], mergedInto: CategoryMergeRow?) {
        let events = try AuditIndex(directory).events(of: id).filter { $0.index <= asOfIndex ?? .max }
        let merge = try store.categoryMerge(loserID: id.description)
        return (events, merge)
    }

    /// An audit trail as the API and `audit history --json` show it.
    public static func auditJSON(_ trail: (events: [LoggedEvent], mergedInto: CategoryMergeRow?)) -> JSONText {
        .object([
            ("events", .array(trail.events.map { $0.event.json(index: $0.index, hash: $0.hash) })),
            ("mergedInto", trail.mergedInto.map { .object([("categoryId", .string($0.winnerID)), ("reason", .string($0.reason))]) } ?? .null),
        ])
    }

    /// The projected events after log index `after`, in one pass over the log: handed to `body`
    /// in chunks of up to `chunkSize` (read and decoded on a second thread) until it returns
    /// false or the events the views showed when the pass began are all handed out.
    public func forEachProjectedChunk(after: UInt64, chunkSize: Int = 1_000, _ body: ([LoggedEvent]) throws -> Bool) throws {
        let last = try store.checkpoint()
        guard last > after else { return }
        struct Enough: Error {}
        do {
            try directory.reader.forEachEventChunk(from: after + 1, chunkSize: chunkSize) { chunk in
                let projected = chunk.prefix { $0.index <= last }
                guard let final = projected.last, try body(Array(projected)), final.index < last else { throw Enough() }
            }
        } catch is Enough {}
    }

    /// The log index the views reflect (as of `asOfIndex`, that index).
    public func projectedIndex() throws -> UInt64 { try asOfIndex ?? store.checkpoint() }

    /// Waits until this process projected past `cursor` (true; `ProjectionProgress`), or
    /// `timeout` passed (false): a change feed's wait for news, which costs nothing while
    /// nothing happens.
    public func waitForProjection(after cursor: UInt64, atMost timeout: Duration) async -> Bool {
        await store.progress.wait(after: cursor, atMost: timeout)
    }
}
