import Foundation
import GRDB
import TallyCore
import TallyLog
import TallyStore

/// Queries on a replica's views, shaped once for the CLI and the API alike: the same filters,
/// limits and JSON (`ViewJSON`). Reading needs no writer lock, so a CLI query runs beside a
/// serving `tally serve`.
public struct LedgerViews: Sendable {
    /// The views (and through them, the log).
    public let projector: Projector
    /// The log index every query answers as of (`asOf(_:warn:)`); nil for the views as they are.
    public let asOfIndex: UInt64?
    /// Hears of damaged snapshots an as-of read passed over.
    private let warn: @Sendable (String) -> Void

    /// Over open views.
    public init(projector: Projector) { (self.projector, asOfIndex, warn) = (projector, nil, { _ in }) }

    private init(projector: Projector, asOfIndex: UInt64, warn: @escaping @Sendable (String) -> Void) {
        (self.projector, self.asOfIndex, self.warn) = (projector, asOfIndex, warn)
    }

    /// The same queries, answered as the views stood at `point` on this replica (at most as
    /// they stand now): from the latest good snapshot at or before it plus the events after
    /// it (`AsOfViews`). `warn` hears of a damaged snapshot that was passed over.
    public func asOf(_ point: AsOf, warn: @escaping @Sendable (String) -> Void) throws -> LedgerViews {
        let now = try projector.checkpoint()
        let index: UInt64
        switch point {
        case .index(let wanted): index = min(wanted, now)
        case .endOfSecond(let second): index = min(try projector.index(atEndOf: second), now)
        }
        return LedgerViews(projector: projector, asOfIndex: index, warn: warn)
    }

    /// Runs a query on the views now, or as of `asOfIndex`.
    func read<T>(_ query: (Database) throws -> T) throws -> T {
        guard let asOfIndex else { return try projector.database.read(query) }
        return try AsOfViews.read(projector.directory, at: asOfIndex, warn: warn, query)
    }

    /// `read` for a query of one SELECT, which SQLite answers from one snapshot by itself: on
    /// the views now, without the transaction GRDB's `read` wraps around every read (a
    /// savepoint and `query_only` switched on and off: four more statements per request, most
    /// of the read's cost), and on a connection of its own rather than through GRDB's reader
    /// pool (`Projector.readDirectly`).
    private func readOneSelect<T>(_ query: (Database) throws -> T) throws -> T {
        guard asOfIndex == nil else { return try read(query) }
        return try projector.readDirectly(query)
    }

    /// Opens the views of `directory` for reading and brings them up to date with the log.
    public static func open(_ directory: DataDirectory) throws -> LedgerViews {
        let projector = try Projector(directory: directory)
        try projector.catchUp()
        return LedgerViews(projector: projector)
    }

    /// The same page as the API's JSON (`{"items": [...], "nextCursor": ...}`), written straight
    /// from the rows: what `pageJSON(expenses(query))` gives, at a fraction of the cost.
    public func expensesPageJSON(_ query: ExpenseQuery) throws -> JSONText {
        let isHeld = isAttachmentHeld
        let page = try readExpenses(query.filter) { try ProjectionQueries.expensesJSON($0, query.filter, isHeld: isHeld) }
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
        let rows = try readExpenses(query.filter) { try ProjectionQueries.expenses($0, query.filter) }
        return (rows, query.nextCursor(after: rows))
    }

    /// Reads expenses matching `filter`: one SELECT, unless a category filter first looks up
    /// the category's tree (then both in one transaction).
    private func readExpenses<T>(_ filter: ExpenseFilter, _ query: (Database) throws -> T) throws -> T {
        filter.categoryId == nil ? try readOneSelect(query) : try read(query)
    }

    /// Whether this replica holds an attachment's blob (for `missingAttachments`).
    public func isAttachmentHeld(_ digest: String) -> Bool {
        (try? BlobStore(directory: projector.directory).size(of: digest)) != nil
    }

    /// A page of expenses as `expenses list --json` shows it (the API writes the same page
    /// straight from the rows: `expensesPageJSON`).
    public func pageJSON(_ page: (rows: [ExpenseRow], nextCursor: String?)) -> JSONText {
        Self.pageJSON(page, isHeld: isAttachmentHeld)
    }

    public static func pageJSON(_ page: (rows: [ExpenseRow], nextCursor: String?), isHeld: (String) -> Bool) -> JSONText {
        .object([("items", .array(page.rows.map { ViewJSON.expense($0, isHeld: isHeld) })), ("nextCursor", page.nextCursor.map(JSONText.string) ?? .null)])
    }

    /// An expense, category or to-do as JSON; nil if there is none. An expense or a to-do is
    /// one SELECT (`readOneSelect`); a category takes two (its merge, then the winner), so it
    /// keeps the transaction, and both see the same views.
    public func entityJSON(_ type: EntityType, id: UUID) throws -> JSONText? {
        let id = id.lowercased
        switch type {
        case .expense: return try readOneSelect { try ProjectionQueries.expense($0, id: id).map { ViewJSON.expense($0, isHeld: isAttachmentHeld) } }
        case .todo: return try readOneSelect { try ProjectionQueries.todo($0, id: id).map { ViewJSON.todo($0, isHeld: isAttachmentHeld) } }
        case .category: return try read { try ProjectionQueries.category($0, id: id).map { ViewJSON.category($0, depth: 0) } }
        case .budget: return try read { try ProjectionQueries.budgets($0).first { $0.id == id }.map(ViewJSON.budget) }
        case .recurring: return try recurringRuleEntities().first { $0.id.description == id }.map { try Self.ruleJSON($0) }
        case .rule: return try read { try ProjectionQueries.liveEntities($0, type: .rule) }.first { $0.id.description == id }.map(Self.ruleEntityJSON)
        case .rate: return try rates().first { if case .object(let fields) = $0, case .string(id)? = fields.first?.1 { true } else { false } }
        case .setting, .importBatch: return nil
        }
    }

    /// Categories as a tree (parents before children, with depth).
    public func categoryTree() throws -> [(category: CategoryRow, depth: Int)] {
        try read { try ProjectionQueries.categoryTree($0) }
    }

    /// Every to-do.
    public func todos() throws -> [TodoRow] { try read { try ProjectionQueries.todos($0) } }

    /// Every setting.
    public func settings() throws -> [SettingRow] { try read { try ProjectionQueries.settings($0) } }

    /// One setting as JSON; nil if there is none.
    public func setting(_ key: String) throws -> JSONText? {
        try read { try ProjectionQueries.setting($0, key: key) }.map(ViewJSON.setting)
    }

    /// A month's totals, by category and by payment (`month` checked as `YYYY-MM`); with
    /// `category`, spending by that category's children (a merged duplicate's id stands for its winner).
    public func summary(month: String, category: String? = nil) throws -> MonthSummary {
        let month = try ExpenseQuery.month(month)
        return try read { db in
            var root: String?
            if let category {
                guard UUID(uuidString: category) != nil else { throw ValidationError(field: "category", "must be a category id (a UUID)") }
                guard let row = try ProjectionQueries.category(db, id: category.lowercased()) else {
                    throw ValidationError(field: "category", "no category \(category)", kind: .notFound)
                }
                root = row.id
            }
            return try ProjectionQueries.summary(db, month: month, within: root)
        }
    }

    /// Every live budget, as written (`month` nil), or the budgets that apply to `month` with
    /// what was spent against each.
    public func budgets() throws -> [BudgetRow] { try read { try ProjectionQueries.budgets($0) } }

    public func budgetStatuses(month: String) throws -> [BudgetStatus] {
        let month = try ExpenseQuery.month(month)
        return try read { try ProjectionQueries.budgetStatuses($0, month: month) }
    }

    /// Every live recurring rule's merged state, by id.
    public func recurringRuleEntities() throws -> [LedgerState.Entity] {
        try read { try ProjectionQueries.liveEntities($0, type: .recurring) }
    }

    /// A rule as JSON: its fields, and the next occurrence days after today.
    public static func ruleJSON(_ entity: LedgerState.Entity, now: DateTime = .nowHere) throws -> JSONText {
        let rule = try? RecurringRule(entity)  // a rule that cannot be read (a peer's) shows with no next days
        var fields: [(String, JSONText)] = [("id", .string(entity.id.description))]
        for field in EntitySpec.recurring.fields {
            let unset: JSONText
            switch field.kind {
            case .days, .textSet: unset = .array([])  // a list never set is empty, not null
            default: unset = .null
            }
            fields.append((field.name.jsonName, entity.value(field.name)?.json ?? unset))
        }
        fields.append(("next", .array((rule?.next(now: now) ?? []).map(JSONText.string))))
        return .object(fields)
    }

    /// Every categorisation rule, as JSON.
    public func rules() throws -> [JSONText] {
        try read { try ProjectionQueries.liveEntities($0, type: .rule) }.map(Self.ruleEntityJSON)
    }

    /// A categorisation rule as JSON: its id and fields (tags an empty list when none).
    static func ruleEntityJSON(_ entity: LedgerState.Entity) -> JSONText {
        .object([("id", .string(entity.id.description))] + EntitySpec.rule.fields.map { field in
            (field.name.jsonName, entity.value(field.name)?.json ?? (field.name == .tags ? .array([]) : .null))
        })
    }

    /// Every category merged into another (a duplicate by name and parent), with why.
    public func categoryMerges() throws -> [CategoryMergeRow] {
        try read { try ProjectionQueries.categoryMerges($0) }
    }

    /// Every month's totals per currency.
    public func monthlyTotals() throws -> [(month: String, total: MonthSummary.Total)] {
        try read { try ProjectionQueries.monthlyTotals($0) }
    }

    /// The conflict journal, optionally of one entity.
    public func conflicts(entity: String?) throws -> [ConflictRow] {
        try read { try ProjectionQueries.conflicts($0, entityID: entity) }
    }

    /// An entity's history: every event that touched it, oldest first, and the category it
    /// was merged into, if it is a merged duplicate (a merge is never a silent delete).
    public func audit(_ id: EntityID) throws -> (events: [LoggedEvent], mergedInto: CategoryMergeRow?) {
        let events = try AuditIndex(projector.directory).events(of: id).filter { $0.index <= asOfIndex ?? .max }
        let merge = try read { try ProjectionQueries.categoryMerge($0, loserID: id.description) }
        return (events, merge)
    }

    /// An audit trail as the API and `audit history --json` show it.
    public static func auditJSON(_ trail: (events: [LoggedEvent], mergedInto: CategoryMergeRow?)) -> JSONText {
        .object([("events", .array(trail.events.map { $0.event.json(index: $0.index, hash: $0.hash) })),
                 ("mergedInto", trail.mergedInto.map { .object([("categoryId", .string($0.winnerID)), ("reason", .string($0.reason))]) } ?? .null)])
    }

    /// The projected events after log index `after`, in one pass over the log: handed to `body`
    /// in chunks of up to `chunkSize` (read and decoded on a second thread) until it returns
    /// false or the events the views showed when the pass began are all handed out.
    public func forEachProjectedChunk(after: UInt64, chunkSize: Int = 1_000, _ body: ([LoggedEvent]) throws -> Bool) throws {
        let last = try projector.checkpoint()
        guard last > after else { return }
        struct Enough: Error {}
        do {
            try projector.directory.reader.forEachEventChunk(from: after + 1, chunkSize: chunkSize) { chunk in
                let projected = chunk.prefix { $0.index <= last }
                guard let final = projected.last, try body(Array(projected)), final.index < last else { throw Enough() }
            }
        } catch is Enough {}
    }

    /// The log index the views reflect (as of `asOfIndex`, that index).
    public func projectedIndex() throws -> UInt64 { try asOfIndex ?? projector.checkpoint() }
}
