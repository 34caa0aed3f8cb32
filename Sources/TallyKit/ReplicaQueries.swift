import Foundation
import TallyCore
import TallyLedger
import TallyLog
import TallyStore

/// The questions an app asks of its replica, answered from the views — as they are now
/// (`Replica.query`) or as they stood at a moment (`Replica.query(asOf:)`). The same queries
/// as the service's and the CLI's (`LedgerViews`); reading takes no lock.
public struct ReplicaQueries: Sendable {
    let views: LedgerViews

    /// Expenses, newest first: of a month (`YYYY-MM`), a category, a tag, or with `text` in
    /// the payee or memo; at most `limit` (up to 1,000).
    public func expenses(month: String? = nil, category: UUID? = nil, tag: String? = nil, text: String? = nil, limit: Int = 100) throws -> [ExpenseRow] {
        try expensePage(month: month, category: category, tag: tag, text: text, limit: limit).rows
    }

    /// One page of the same list, and the cursor of the next page (nil after the last one).
    public func expensePage(
        month: String? = nil, category: UUID? = nil, tag: String? = nil, text: String? = nil, limit: Int = 100, after cursor: String? = nil
    ) throws -> (rows: [ExpenseRow], nextCursor: String?) {
        var parameters: [(String, String)] = [("limit", String(limit))]
        if let month { parameters.append(("month", month)) }
        if let category { parameters.append(("category", category.uuidString)) }
        if let tag { parameters.append(("tag", tag)) }
        if let text { parameters.append(("text", text)) }
        if let cursor { parameters.append(("cursor", cursor)) }
        return try views.expenses(ExpenseQuery(parameters))
    }

    public func expense(id: UUID) throws -> ExpenseRow? { try views.expense(id: id) }

    /// Categories as a tree: parents before their children, each with its depth.
    public func categories() throws -> [(category: CategoryRow, depth: Int)] { try views.categoryTree() }
    public func category(id: UUID) throws -> CategoryRow? { try views.category(id: id) }

    public func todos() throws -> [TodoRow] { try views.todos() }
    public func todo(id: UUID) throws -> TodoRow? { try views.todo(id: id) }

    /// Every setting (replicated and this replica's own `local.…` ones).
    public func settings() throws -> [SettingRow] { try views.settings() }
    /// One setting's value as JSON text, or nil.
    public func setting(_ key: String) throws -> String? { try views.settingValue(key) }

    /// A month's totals by currency, category and payment.
    public func summary(month: String) throws -> MonthSummary { try views.summary(month: month) }
    public func budgets() throws -> [BudgetRow] { try views.budgets() }
    public func budgetStatuses(month: String) throws -> [BudgetStatus] { try views.budgetStatuses(month: month) }

    /// Concurrent edits the merge decided (the journal), of one entity or all.
    public func conflicts(of id: UUID? = nil) throws -> [ConflictRow] { try views.conflicts(entity: id?.lowercased) }

    /// Every event that touched an entity, oldest first: who wrote what, when, on which replica.
    public func history(of id: UUID) throws -> [LoggedEvent] { try views.audit(.uuid(id)).events }

    /// Every account's balance at `at` (now by default), in its currency (issue 34).
    public func balances(at date: Date = Date()) throws -> [AccountBalance] {
        let millis = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard millis.isFinite, let at = Int64(exactly: millis) else { throw ValidationError(field: "at", "must be a real date") }
        return try views.accountBalances(at: at)
    }

    /// A card's statements closing in the months `from` … `to` (at most 120 of them); nil when
    /// the account is no card with a closing day.
    public func cardBills(of account: UUID, from: (year: Int, month: Int), to: (year: Int, month: Int)) throws -> [CardBill]? {
        guard (1...9999).contains(from.year), (1...12).contains(from.month), (1...9999).contains(to.year), (1...12).contains(to.month) else {
            throw ValidationError(field: "month", "must be a month of years 1 to 9999")
        }
        return try views.cardBills(
            of: account, from: CardCycle.index(year: from.year, month: from.month), to: CardCycle.index(year: to.year, month: to.month))
    }

    /// Who paid and who owes: each person's balance per currency (and `SettleUp.plan` of one
    /// currency's balances gives the fewest transfers that settle it).
    public func people() throws -> PeopleBalances { try views.peopleBalances() }

    /// An account against its statement: the difference, the cleared lines and those changed
    /// since it was reconciled; nil when there is no such account.
    public func reconciliation(of account: UUID) throws -> Reconciliation? { try views.reconciliation(of: account) }

    /// An expense as a split receipt (its lines, what they add up to, whether it needs
    /// attention), and every split receipt with the lines whose expense has not arrived — as the
    /// API shows them.
    public func splitReceipt(of expense: UUID) throws -> JSONText { try views.splitReceiptDocument(expense: expense) }
    public func splitReceipts() throws -> JSONText { try views.splitReceiptsDocument() }

    /// Income and spending per month, category and currency, for `from` … `to` (`YYYY-MM`).
    public func monthTotals(from: String, to: String) throws -> [MonthCategoryTotal] {
        try views.monthTotals(from: try ExpenseQuery.month(from), to: try ExpenseQuery.month(to))
    }

    /// Recurring entries, categorisation rules and exchange rates, as the API shows them.
    public func recurringRules() throws -> [JSONText] { try views.recurringRuleEntities().map { try LedgerViews.ruleJSON($0) } }
    public func rules() throws -> [JSONText] { try views.rules() }
    public func rates() throws -> [JSONText] { try views.rates() }

    /// The log index these answers are as of.
    public func projectedIndex() throws -> UInt64 { try views.projectedIndex() }
}

extension Replica {
    /// The views as they are now.
    public var query: ReplicaQueries { get throws { ReplicaQueries(views: try current().views) } }

    /// The views as they stood at `point` on this replica: an ISO 8601 time
    /// (`2026-11-01T09:00:00+09:00`, local time without an offset), a day (its end), or a log
    /// index (digits).
    public func query(asOf point: String) throws -> ReplicaQueries {
        ReplicaQueries(views: try current().views.asOf(AsOf(parsing: point), warn: { _ in }))
    }
}
