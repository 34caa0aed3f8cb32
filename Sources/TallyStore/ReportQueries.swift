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
        try Row.fetchAll(
            db,
            sql: """
                SELECT month, category_id, kind, currency, high, low, n FROM month_totals
                WHERE month >= ? AND month <= ? AND n > 0 ORDER BY month, category_id, kind, currency
                """, arguments: [from, to]
        ).map { row in
            let category: String = row["category_id"]
            return MonthCategoryTotal(
                month: row["month"], categoryId: category.isEmpty ? nil : category, kind: row["kind"], currency: row["currency"],
                total: AmountSum(high: row["high"], low: row["low"]), count: row["n"])
        }
    }
}
