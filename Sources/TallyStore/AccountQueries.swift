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

    /// Every live account's balance at the end of millisecond `at` (UTC epoch): the days before
    /// `at`'s UTC day from `account_days` (kept by triggers, `0009_account_days.sql`), that day
    /// itself from its rows. Sums are split in two parts (`AmountSum(high:low:)`) so SQLite never
    /// overflows.
    public static func accountBalances(_ db: Database, at: Int64) throws -> [AccountBalance] {
        let dayMillis: Int64 = 86_400_000
        let day = at >= 0 ? at / dayMillis : -((-at + dayMillis - 1) / dayMillis)  // floor
        let dayStart = day.multipliedReportingOverflow(by: dayMillis)
        let from = dayStart.overflow ? Int64.min : dayStart.partialValue
        var balances: [AccountBalance] = []
        let days = try db.cachedStatement(
            sql: """
                SELECT currency, SUM(high) AS high, SUM(low) AS low, SUM(n) AS n FROM account_days
                WHERE account_id = ? AND day < ? GROUP BY currency
                """)
        let expenses = try db.cachedStatement(
            sql: """
                SELECT currency, SUM(CASE kind WHEN 'income' THEN 1 ELSE -1 END * (amount / 1000000000)) AS high,
                    SUM(CASE kind WHEN 'income' THEN 1 ELSE -1 END * (amount % 1000000000)) AS low, count(*) AS n
                FROM expenses WHERE account_id = ? AND date_ms >= ? AND date_ms <= ? GROUP BY currency
                """)
        let outs = try db.cachedStatement(
            sql:
                "SELECT SUM(amount / 1000000000) AS high, SUM(amount % 1000000000) AS low FROM transfers WHERE account_id = ? AND date_ms >= ? AND date_ms <= ?"
        )
        let ins = try db.cachedStatement(
            sql: """
                SELECT SUM(COALESCE(to_amount, amount) / 1000000000) AS high, SUM(COALESCE(to_amount, amount) % 1000000000) AS low
                FROM transfers WHERE to_account_id = ? AND date_ms >= ? AND date_ms <= ?
                """)
        for row in try Row.fetchAll(db, sql: "SELECT id, name, kind, currency, is_archived, opening_balance, opening_ms FROM accounts ORDER BY name, id") {
            let id: String = row["id"]
            let currency: String = row["currency"]
            var balance = AmountSum(row["opening_ms"] <= at ? row["opening_balance"] : 0)
            var other = 0
            func add(_ part: Row, sign: Int64 = 1) {
                guard let high = part["high"] as Int64?, let low = part["low"] as Int64? else { return }
                let sum = AmountSum(high: high, low: low)
                if sign > 0 { balance.add(sum) } else { balance = balance.minus(sum) }
            }
            for part in try Row.fetchAll(days, arguments: [id, day]) + Row.fetchAll(expenses, arguments: [id, from, at]) {
                let partCurrency: String = part["currency"]
                if partCurrency == currency || partCurrency.isEmpty { add(part) } else { other += part["n"] as Int? ?? 0 }
            }
            if let part = try Row.fetchOne(outs, arguments: [id, from, at]) { add(part, sign: -1) }
            if let part = try Row.fetchOne(ins, arguments: [id, from, at]) { add(part) }
            balances.append(
                AccountBalance(
                    id: id, name: row["name"], kind: row["kind"], currency: currency, isArchived: row["is_archived"], balance: balance,
                    otherCurrencyExpenses: other))
        }
        return balances
    }
}
