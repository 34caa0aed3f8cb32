import Foundation
import GRDB
import TallyCore
import TallyLog

/// The views to query — as they stand now, or as they stood at a past log index — and every
/// query the layers above ask of them, typed. It is Store's API: the Ledger reads through it
/// and holds no `Database` and writes no SQL (issue 30).
///
/// A query of one SELECT on the views now runs outside any transaction on a connection of
/// its own (`Projector.readDirectly`: SQLite answers one statement from one snapshot by
/// itself, and GRDB's `read` adds four statements and the reader pool's waits); a query of
/// several statements runs in one read transaction, so they all see the same views.
public struct Views: Sendable {
    let projector: Projector
    /// The log index every query answers as of (`asOf`); nil for the views as they are.
    public private(set) var asOfIndex: UInt64?
    /// Hears of damaged snapshots an as-of read passed over.
    private var warn: @Sendable (String) -> Void

    /// The views of `projector`, as they are.
    public init(_ projector: Projector) { (self.projector, asOfIndex, warn) = (projector, nil, { _ in }) }

    /// The same views as they stood at log index `index` (from the latest good snapshot at or
    /// before it plus the events after it, `AsOfViews`); `warn` hears of damaged snapshots.
    public func asOf(index: UInt64, warn: @escaping @Sendable (String) -> Void) -> Views {
        var views = self
        (views.asOfIndex, views.warn) = (index, warn)
        return views
    }

    /// The replica.
    public var directory: DataDirectory { projector.directory }

    /// The log index the views reflect now (not as of anything).
    public func checkpoint() throws -> UInt64 { try projector.checkpointDirectly() }

    /// How far this process's projector has taken the views (woken on each commit).
    public var progress: ProjectionProgress { projector.progress }

    /// The log index the views showed at the end of `second` (Unix seconds).
    public func index(atEndOf second: Int64) throws -> UInt64 { try projector.index(atEndOf: second) }

    /// Runs several statements in one read transaction, on the views now or as of `asOfIndex`.
    private func read<T>(_ query: (Database) throws -> T) throws -> T {
        guard let asOfIndex else { return try projector.database.read(query) }
        return try AsOfViews.read(projector.directory, at: asOfIndex, warn: warn, query)
    }

    /// Runs one SELECT: directly on the views now, or as `read` for the past.
    private func readOneSelect<T>(_ query: (Database) throws -> T) throws -> T {
        guard asOfIndex == nil else { return try read(query) }
        return try projector.readDirectly(query)
    }

    // MARK: Expenses

    /// One page of expenses matching `filter`, newest first. One SELECT, unless a category
    /// filter first looks up the category's tree (then both in one transaction).
    public func expenses(_ filter: ExpenseFilter) throws -> [ExpenseRow] {
        try readExpenses(filter) { try ProjectionQueries.expenses($0, filter) }
    }

    /// The same page written as JSON straight from the rows (`ViewRecordJSON`).
    public func expensesJSON(_ filter: ExpenseFilter, isHeld: (String) -> Bool) throws -> ViewRecordJSON.Page {
        try readExpenses(filter) { try ProjectionQueries.expensesJSON($0, filter, isHeld: isHeld) }
    }

    private func readExpenses<T>(_ filter: ExpenseFilter, _ query: (Database) throws -> T) throws -> T {
        filter.categoryId == nil ? try readOneSelect(query) : try read(query)
    }

    /// One expense by id (lowercased), as a row or as its JSON.
    public func expense(id: String) throws -> ExpenseRow? { try readOneSelect { try ProjectionQueries.expense($0, id: id) } }

    public func expenseJSON(id: String, isHeld: (String) -> Bool) throws -> JSONText? {
        try readOneSelect { try ProjectionQueries.expenseJSON($0, id: id, isHeld: isHeld) }
    }

    /// The expenses matching `filter` and every category (for their paths), read together.
    public func expensesWithCategories(_ filter: ExpenseFilter) throws -> (expenses: [ExpenseRow], categories: [CategoryRow]) {
        try read { (try ProjectionQueries.expenses($0, filter), try ProjectionQueries.categoryTree($0).map(\.category)) }
    }

    /// The expenses matching `filter` and every live entity of `type` (rates, to convert them), read together.
    public func expenses(_ filter: ExpenseFilter, with type: EntityType) throws -> (expenses: [ExpenseRow], entities: [LedgerState.Entity]) {
        try read { (try ProjectionQueries.expenses($0, filter), try ProjectionQueries.liveEntities($0, type: type)) }
    }

    // MARK: Categories, to-dos, settings

    /// One category by id; a merged-away duplicate answers with its winner (two statements).
    public func category(id: String) throws -> CategoryRow? { try read { try ProjectionQueries.category($0, id: id) } }

    /// Categories as a tree (parents before children, with depth).
    public func categoryTree() throws -> [(category: CategoryRow, depth: Int)] { try read { try ProjectionQueries.categoryTree($0) } }

    /// Every category merged into another, with why.
    public func categoryMerges() throws -> [CategoryMergeRow] { try read { try ProjectionQueries.categoryMerges($0) } }

    /// The merge a category lost, if any.
    public func categoryMerge(loserID: String) throws -> CategoryMergeRow? {
        try read { try ProjectionQueries.categoryMerge($0, loserID: loserID) }
    }

    /// One to-do by id (lowercased), as a row or as its JSON.
    public func todo(id: String) throws -> TodoRow? { try readOneSelect { try ProjectionQueries.todo($0, id: id) } }

    public func todoJSON(id: String, isHeld: (String) -> Bool) throws -> JSONText? {
        try readOneSelect { try ProjectionQueries.todoJSON($0, id: id, isHeld: isHeld) }
    }

    /// Every to-do, as rows or as a JSON array.
    public func todos() throws -> [TodoRow] { try read { try ProjectionQueries.todos($0) } }

    public func todosJSON(isHeld: (String) -> Bool) throws -> JSONText { try readOneSelect { try ProjectionQueries.todosJSON($0, isHeld: isHeld) } }

    /// Every setting.
    public func settings() throws -> [SettingRow] { try read { try ProjectionQueries.settings($0) } }

    /// One setting by key; nil if there is none.
    public func setting(key: String) throws -> SettingRow? { try read { try ProjectionQueries.setting($0, key: key) } }

    // MARK: Summaries and budgets

    /// A month's totals; with `category`, spending by that category's children (a merged
    /// duplicate's id stands for its winner). Nil when there is no such category.
    /// `byBill`: card purchases in the month their bill is due.
    public func summary(month: String, category: String?, byBill: Bool = false, schedules: [String: CardSchedule] = [:]) throws -> MonthSummary? {
        try read { db in
            guard let category else { return try ProjectionQueries.summary(db, month: month, byBill: byBill, schedules: schedules) }
            guard let root = try ProjectionQueries.category(db, id: category) else { return nil }
            return try ProjectionQueries.summary(db, month: month, within: root.id, byBill: byBill, schedules: schedules)
        }
    }

    /// The ids of the accounts that are cards, or have a closing day.
    public func cardIDs() throws -> [String] {
        try read { try String.fetchAll($0, sql: "SELECT id FROM accounts WHERE closing_day IS NOT NULL OR kind = 'card' ORDER BY id") }
    }

    /// Every month's totals per currency.
    public func monthlyTotals() throws -> [(month: String, total: MonthSummary.Total)] { try read { try ProjectionQueries.monthlyTotals($0) } }

    /// Every live budget, as written: as rows, as a JSON array, or one by id as its JSON.
    public func budgets() throws -> [BudgetRow] { try read { try ProjectionQueries.budgets($0) } }

    public func budgetsJSON() throws -> JSONText { try readOneSelect { try ProjectionQueries.budgetsJSON($0) } }

    public func budgetJSON(id: String) throws -> JSONText? { try readOneSelect { try ProjectionQueries.budgetJSON($0, id: id) } }

    /// Accounts (issue 34): every live one as JSON, one by id, and their balances at a moment.
    public func accountsJSON() throws -> JSONText { try readOneSelect { try ProjectionQueries.accountsJSON($0) } }
    public func accountJSON(id: String) throws -> JSONText? { try readOneSelect { try ProjectionQueries.accountJSON($0, id: id) } }
    public func accountBalances(at millis: Int64) throws -> [AccountBalance] { try read { try ProjectionQueries.accountBalances($0, at: millis) } }

    /// Income and spending per month, category and currency (`month_totals`).
    public func monthTotals(from: String, to: String) throws -> [MonthCategoryTotal] { try read { try ProjectionQueries.monthTotals($0, from: from, to: to) } }

    /// A card's statements closing in months `from` … `to` (nil: not a card with a closing day).
    public func cardBills(accountID: String, from: Int, to: Int, schedule: CardSchedule? = nil) throws -> [CardBill]? {
        try read { try ProjectionQueries.cardBills($0, accountID: accountID, from: from, to: to, schedule: schedule) }
    }

    /// Split receipts (every one, or one expense's), one line, and the lines of an expense.
    public func splitReceiptsJSON(expenseID: String? = nil) throws -> JSONText? {
        try read { try ProjectionQueries.splitReceiptsJSON($0, expenseID: expenseID) }
    }
    public func lineJSON(id: String) throws -> JSONText? { try readOneSelect { try ProjectionQueries.lineJSON($0, id: id) } }
    public func lineCategories(expenseID: String) throws -> [String: String?] {
        try read { try ProjectionQueries.lineCategories($0, expenseID: expenseID) }
    }

    /// The `limit` largest expenses of each currency in months `from` … `to`.
    public func largestExpenses(from: String, to: String, limit: Int) throws -> [LargeExpense] {
        try read { try ProjectionQueries.largestExpenses($0, from: from, to: to, limit: limit) }
    }

    /// An account's reconciliation against its statement; nil when there is no such account.
    public func reconciliation(accountID: String) throws -> Reconciliation? { try read { try ProjectionQueries.reconciliation($0, accountID: accountID) } }

    /// Who owes whom, and one settlement as JSON.
    public func peopleBalances() throws -> PeopleBalances { try read { try ProjectionQueries.peopleBalances($0) } }
    public func settlementJSON(id: String) throws -> JSONText? { try readOneSelect { try ProjectionQueries.settlementJSON($0, id: id) } }

    /// Transfers, newest first (at most `limit`), as JSON; one by id.
    public func transfersJSON(limit: Int) throws -> JSONText { try readOneSelect { try ProjectionQueries.transfersJSON($0, limit: limit) } }
    public func transferJSON(id: String) throws -> JSONText? { try readOneSelect { try ProjectionQueries.transferJSON($0, id: id) } }

    /// The budgets that apply to `month`, with what was spent against each.
    public func budgetStatuses(month: String) throws -> [BudgetStatus] { try read { try ProjectionQueries.budgetStatuses($0, month: month) } }

    // MARK: Entities, conflicts, attachments

    /// Every live entity of `type`, as merged.
    public func liveEntities(_ type: EntityType) throws -> [LedgerState.Entity] { try readOneSelect { try ProjectionQueries.liveEntities($0, type: type) } }

    /// Every live entity of every type, read together, type by type.
    public func allLiveEntities() throws -> [(type: EntityType, entities: [LedgerState.Entity])] {
        try read { db in try EntityType.allCases.map { ($0, try ProjectionQueries.liveEntities(db, type: $0)) } }
    }

    /// The conflict journal, optionally of one entity.
    public func conflicts(entityID: String?) throws -> [ConflictRow] { try read { try ProjectionQueries.conflicts($0, entityID: entityID) } }

    /// How many conflicts are journaled and categories merged (a sync reports the growth).
    public func mergeCounts() throws -> (conflicts: Int, merges: Int) { try read { try ProjectionQueries.mergeCounts($0) } }

    /// Every attachment digest a live expense or to-do references.
    public func referencedAttachments() throws -> Set<String> { try read { try ProjectionQueries.referencedAttachments($0) } }

    // MARK: Checking writes

    /// Runs `body` with a `LedgerLookup` of the views now, every lookup in it seeing the same
    /// state (one read transaction): what a write is built and checked against.
    public func withLookup<T>(_ body: (any LedgerLookup) throws -> T) throws -> T {
        try projector.database.read { try body(ProjectionLookup($0)) }
    }

    /// `withLookup` without the transaction: each lookup sees the views as they are when it
    /// runs (`Projector.readDirectly`), for a single write's checks, which a snapshot would not
    /// make safer (the views may move before the append either way).
    public func withLookupDirectly<T>(_ body: (any LedgerLookup) throws -> T) throws -> T {
        try Self.readingForAWrite { try projector.readDirectly { try body(ProjectionLookup($0)) } }
    }

    /// Runs `body`, whose reads are a write's own (its checks, the entity it answers with, the
    /// recurrence pass's rules): views that keep few connections
    /// (`ViewConnections.writeReadsOnWriter`) read them on the writer when no reader is idle
    /// and no catch-up holds the writer, rather than opening a reader.
    public static func readingForAWrite<T>(_ body: () throws -> T) rethrows -> T {
        try CurrentViews.$readingForAWrite.withValue(true, operation: body)
    }

    // MARK: Snapshots

    /// Copies the views as they stand now into `snapshots` (for as-of reads).
    public func takeSnapshot(into snapshots: ViewSnapshots) throws -> ViewSnapshots.Snapshot? {
        try snapshots.take(from: projector.database)
    }
}
