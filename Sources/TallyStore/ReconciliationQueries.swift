import Foundation
import GRDB
import TallyCore

/// An account reconciled against a statement (issue 34, docs/HOUSEHOLD.md "Reconciliation"):
/// what it shows up to `reconciledThrough` is cleared; the statement's balance then against
/// the balance the views compute for that moment is the difference; a cleared line whose
/// amount, date, account, kind or currency changed (or that was added) after the
/// reconciliation was written — by the stamps, so every replica flags the same lines — is
/// flagged, not silently taken in. (An edit stamped before the reconciliation that reached
/// this replica after it, a line deleted or moved out of the period: the difference shows them.)
public struct Reconciliation: Sendable, Equatable {
    /// A line dated within the reconciled period whose latest change came after the
    /// reconciliation: an expense or a transfer, when it changed and what it is now.
    public struct ChangedLine: Sendable, Equatable {
        public var type: EntityType
        public var id: String
        public var date: String
        public var amount: Int64
        public var changedAt: DateTime
    }

    public var accountId: String
    public var currency: String
    /// Nil when the account was never reconciled (then nothing else is set).
    public var reconciledThrough: String?
    public var statementBalance: Int64?
    /// The balance the views compute at `reconciledThrough`, and the statement's less it.
    public var balance: AmountSum
    public var difference: AmountSum?
    /// When the reconciliation was written (its stamp's clock reading).
    public var reconciledAt: DateTime?
    /// Lines (expenses naming it, transfers out and in) dated up to `reconciledThrough`.
    public var clearedCount: Int
    /// Cleared lines changed or added after the reconciliation, latest change first.
    public var changedSince: [ChangedLine]
}

extension ProjectionQueries {
    /// What a line's part in a balance is made of: a change of anything else (a memo, a tag, a
    /// category) is no change to what was reconciled.
    static let balanceProperties: Set<PropertyName> = [.amount, .toAmount, .date, .accountId, .toAccountId, .kind, .currency]

    /// The reconciliation of account `id`, or nil when the views hold no such account.
    public static func reconciliation(_ db: Database, accountID: String) throws -> Reconciliation? {
        guard
            let account = try Row.fetchOne(
                db, sql: "SELECT currency, reconciled_through, statement_balance, reconciled_ms FROM accounts WHERE id = ?", arguments: [accountID])
        else { return nil }
        var result = Reconciliation(
            accountId: accountID, currency: account["currency"], reconciledThrough: account["reconciled_through"],
            statementBalance: account["statement_balance"], balance: AmountSum(), difference: nil, reconciledAt: nil, clearedCount: 0, changedSince: [])
        guard let through: Int64 = account["reconciled_ms"] else { return result }
        result.balance = try accountBalances(db, at: through).first { $0.id == accountID }?.balance ?? AmountSum()
        if let statement = result.statementBalance { result.difference = AmountSum(statement).minus(result.balance) }
        let state = try Row.fetchOne(db, sql: "SELECT id, state FROM entity_state WHERE id = ?", arguments: [accountID]).map(entityState)
        guard let reconciled = state?.stamps[.reconciledThrough] else { return result }
        result.reconciledAt = DateTime(epochMillis: Int64(clamping: reconciled.timestamp.millis), offsetMinutes: 0)
        let cleared = try Row.fetchAll(
            db,
            sql: """
                SELECT 1 AS type, id, date, amount FROM expenses WHERE account_id = ?1 AND date_ms <= ?2 AND currency = ?3
                UNION ALL SELECT 11, id, date, amount FROM transfers WHERE account_id = ?1 AND date_ms <= ?2
                UNION ALL SELECT 11, id, date, COALESCE(to_amount, amount) FROM transfers WHERE to_account_id = ?1 AND date_ms <= ?2
                """, arguments: [accountID, through, result.currency])
        result.clearedCount = cleared.count
        let states = try db.cachedStatement(sql: "SELECT id, state FROM entity_state WHERE id = ?")
        for line in cleared {
            guard let row = try Row.fetchOne(states, arguments: [line["id"] as String]),
                let latest = try entityState(row).stamps.filter({ Self.balanceProperties.contains($0.key) }).values.max(), latest > reconciled,
                let type = EntityType(rawValue: line["type"])
            else { continue }
            result.changedSince.append(
                Reconciliation.ChangedLine(
                    type: type, id: line["id"], date: line["date"], amount: line["amount"],
                    changedAt: DateTime(epochMillis: Int64(clamping: latest.timestamp.millis), offsetMinutes: 0)))
        }
        result.changedSince.sort { ($0.changedAt.epochMillis, $0.id) > ($1.changedAt.epochMillis, $1.id) }
        return result
    }
}
