import Foundation
import GRDB
import TallyCore

/// One month's income or spending in one category (as shown; nil: none) and currency.
public struct MonthCategoryTotal: Sendable, Equatable {
    public var month: String
    public var categoryId: String?
    public var kind: String
    public var currency: String
    public var total: AmountSum
    public var count: Int
}

extension ProjectionQueries {
    /// Every month from `from` through `to` (`YYYY-MM`), per category, kind and currency, from
    /// `month_totals` (kept by triggers, `0010_month_totals.sql`): months and categories in
    /// order, none left out that has an expense.
    public static func monthTotals(_ db: Database, from: String, to: String) throws -> [MonthCategoryTotal] {
        struct Key: Hashable, Comparable {
            var month, category, kind, currency: String
            static func < (a: Key, b: Key) -> Bool { (a.month, a.category, a.kind, a.currency) < (b.month, b.category, b.kind, b.currency) }
        }
        var totals: [Key: (total: AmountSum, count: Int)] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT month, category_id, kind, currency, high, low, n FROM month_totals WHERE month >= ? AND month <= ? AND n > 0",
            arguments: [from, to])
        {
            totals[Key(month: row["month"], category: row["category_id"], kind: row["kind"], currency: row["currency"])] = (
                AmountSum(high: row["high"], low: row["low"]), row["n"]
            )
        }
        // Split receipts' lines move amounts between categories (counted as no expense of their own).
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT month, COALESCE(category_id, '') AS category_id, kind, currency, \(splitSum("amount")) FROM (\(lineShiftsSQL))
                WHERE month >= ? AND month <= ? GROUP BY month, COALESCE(category_id, ''), kind, currency
                """, arguments: [from, to])
        {
            let key = Key(month: row["month"], category: row["category_id"], kind: row["kind"], currency: row["currency"])
            var entry = totals[key] ?? (AmountSum(), 0)
            entry.total.add(AmountSum(row, LineShiftColumn.amount.rawValue))
            totals[key] = entry
        }
        return totals.filter { $0.value.count > 0 || $0.value.total != AmountSum() }.sorted { $0.key < $1.key }.map { key, entry in
            MonthCategoryTotal(
                month: key.month, categoryId: key.category.isEmpty ? nil : key.category, kind: key.kind, currency: key.currency,
                total: entry.total, count: entry.count)
        }
    }
}

/// One of a year's largest expenses (the year in review).
public struct LargeExpense: Sendable, Equatable {
    public var id: String
    public var date: String
    public var payee: String?
    public var amount: Int64
    public var currency: String
    public var categoryId: String?
}

extension ProjectionQueries {
    /// The `limit` largest expenses (not incomes) of each currency in months `from` … `to`.
    public static func largestExpenses(_ db: Database, from: String, to: String, limit: Int) throws -> [LargeExpense] {
        let currencies = try String.fetchAll(
            db, sql: "SELECT DISTINCT currency FROM month_totals WHERE month >= ? AND month <= ? AND kind = 'expense' AND n > 0 ORDER BY currency",
            arguments: [from, to])
        var largest: [LargeExpense] = []
        // The ids first, from the covering `expenses_month_totals` index (no row is read until
        // the few chosen): a year's expenses sorted by amount, read row by row, took a second.
        let chosen = try db.cachedStatement(
            sql: """
                SELECT id FROM expenses INDEXED BY expenses_month_totals
                WHERE month >= ? AND month <= ? AND kind = 'expense' AND currency = ? ORDER BY amount DESC, id LIMIT ?
                """)
        let row = try db.cachedStatement(sql: "SELECT id, date, payee, amount, currency, category_id FROM expenses WHERE id = ?")
        for currency in currencies {
            for id in try String.fetchAll(chosen, arguments: [from, to, currency, limit]) {
                guard let expense = try Row.fetchOne(row, arguments: [id]) else { continue }
                largest.append(
                    LargeExpense(
                        id: expense["id"], date: expense["date"], payee: expense["payee"], amount: expense["amount"], currency: expense["currency"],
                        categoryId: expense["category_id"]))
            }
        }
        return largest
    }
}
