import Foundation
import GRDB
import TallyCore

/// An account as the views show it, with its balance at a moment (issue 34).
public struct AccountBalance: Sendable, Equatable {
    public var id: String
    public var name: String
    public var kind: String
    public var currency: String
    public var isArchived: Bool
    /// Opening balance (from its opening day), plus the incomes and less the expenses that name
    /// it, plus the transfers in and less the transfers out, up to the moment asked for.
    public var balance: AmountSum
    /// Expenses that name the account in another currency than its own: not in `balance`
    /// (an expense's currency is what left the account only when the two agree).
    public var otherCurrencyExpenses: Int
}

extension ProjectionQueries {
    /// Every live account by name, as its JSON; one by id.
    public static func accountsJSON(_ db: Database) throws -> JSONText {
        .raw(
            String(decoding: try ViewRecordJSON.write(try db.cachedStatement(sql: accountsSQL), [], .accounts, isHeld: { _ in true }, db).items, as: UTF8.self))
    }

    public static func accountJSON(_ db: Database, id: String) throws -> JSONText? {
        let statement = try db.cachedStatement(sql: "SELECT \(ViewRecordJSON.Selection.accounts.sql) FROM accounts a WHERE a.id = ?")
        return oneJSON(try ViewRecordJSON.write(statement, [id], .accounts, isHeld: { _ in true }, db))
    }

    private static let accountsSQL = "SELECT \(ViewRecordJSON.Selection.accounts.sql) FROM accounts a ORDER BY a.name, a.id"

    /// Every live transfer, newest first, as its JSON; one by id.
    public static func transfersJSON(_ db: Database, limit: Int) throws -> JSONText {
        let statement = try db.cachedStatement(
            sql: "SELECT \(ViewRecordJSON.Selection.transfers.sql) FROM transfers x ORDER BY x.date_ms DESC, x.id DESC LIMIT ?")
        return .raw(String(decoding: try ViewRecordJSON.write(statement, [limit], .transfers, isHeld: { _ in true }, db).items, as: UTF8.self))
    }

    public static func transferJSON(_ db: Database, id: String) throws -> JSONText? {
        let statement = try db.cachedStatement(sql: "SELECT \(ViewRecordJSON.Selection.transfers.sql) FROM transfers x WHERE x.id = ?")
        return oneJSON(try ViewRecordJSON.write(statement, [id], .transfers, isHeld: { _ in true }, db))
    }

    /// Every live account's balance at the end of millisecond `at` (UTC epoch). Sums are split
    /// in two parts (`AmountSum(high:low:)`) so SQLite never overflows, and each comes from an
    /// index alone (`0008_accounts_and_transfers.sql`).
    public static func accountBalances(_ db: Database, at: Int64) throws -> [AccountBalance] {
        var balances: [String: AccountBalance] = [:]
        var order: [String] = []
        for row in try Row.fetchAll(
            db, sql: "SELECT id, name, kind, currency, is_archived, opening_balance, opening_ms FROM accounts ORDER BY name, id")
        {
            let id: String = row["id"]
            let opening: Int64 = row["opening_ms"] <= at ? row["opening_balance"] : 0
            balances[id] = AccountBalance(
                id: id, name: row["name"], kind: row["kind"], currency: row["currency"], isArchived: row["is_archived"], balance: AmountSum(opening),
                otherCurrencyExpenses: 0)
            order.append(id)
        }
        let split = "SUM(amount / 1000000000) AS high, SUM(amount % 1000000000) AS low"
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT e.account_id, e.kind, e.currency = a.currency AS same, count(*) AS n, SUM(e.amount / 1000000000) AS high, SUM(e.amount % 1000000000) AS low
                FROM expenses e JOIN accounts a ON a.id = e.account_id
                WHERE e.account_id IS NOT NULL AND e.date_ms <= ? GROUP BY e.account_id, e.kind, same
                """, arguments: [at])
        {
            let id: String = row["account_id"]
            guard balances[id] != nil else { continue }
            guard row["same"] as Bool else {
                balances[id]?.otherCurrencyExpenses += row["n"] as Int
                continue
            }
            let sum = AmountSum(high: row["high"], low: row["low"])
            guard let current = balances[id]?.balance else { continue }
            var income = current
            income.add(sum)
            balances[id]?.balance = row["kind"] as String == "income" ? income : current.minus(sum)
        }
        for row in try Row.fetchAll(db, sql: "SELECT account_id, \(split) FROM transfers WHERE date_ms <= ? GROUP BY account_id", arguments: [at]) {
            let id: String = row["account_id"]
            guard let current = balances[id]?.balance else { continue }
            balances[id]?.balance = current.minus(AmountSum(high: row["high"], low: row["low"]))
        }
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT to_account_id, SUM(COALESCE(to_amount, amount) / 1000000000) AS high, SUM(COALESCE(to_amount, amount) % 1000000000) AS low
                FROM transfers WHERE date_ms <= ? GROUP BY to_account_id
                """, arguments: [at])
        {
            let id: String = row["to_account_id"]
            balances[id]?.balance.add(AmountSum(high: row["high"], low: row["low"]))
        }
        return order.compactMap { balances[$0] }
    }
}
