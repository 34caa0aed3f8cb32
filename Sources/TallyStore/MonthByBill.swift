import Foundation
import GRDB
import TallyCore

/// A month's spending by bill (issue 34, docs/HOUSEHOLD.md "A month by bill"): a purchase on a
/// card with a closing day counts in the month its statement is due (bought on March 20th on a
/// card closing on the 14th and paying on the 1st: on April's statement, due May 1st — in May),
/// everything else in the month it was made. What the month's summary groups, as parts.
extension ProjectionQueries {
    /// One group of a month's expenses: kind, currency, category, payment method, how much and
    /// how many (0 for a split receipt's line, which moves an amount between categories).
    struct MonthPart {
        var kind: String
        var currency: String
        var category: String?
        var payment: String?
        var amount: AmountSum
        var count: Int
    }

    /// The month's parts by purchase date (`byBill` false) or by bill.
    static func monthParts(_ db: Database, month: String, byBill: Bool) throws -> [MonthPart] {
        let cards = byBill ? try cardCycles(db) : [:]
        // The cards' ids are the views' own lower-case UUIDs: written into the SQL as they are.
        let notOnCards =
            cards.isEmpty ? "" : " AND (account_id IS NULL OR account_id NOT IN (\(cards.keys.sorted().map { "'\($0)'" }.joined(separator: ","))))"
        var parts = try Row.fetchAll(
            db,
            sql: """
                SELECT kind, currency, category_id, payment, \(splitSum("amount")), COUNT(*) FROM expenses WHERE month = ?\(notOnCards)
                GROUP BY kind, currency, category_id, payment
                UNION ALL
                SELECT kind, currency, category_id, payment, \(splitSum("amount")), 0 FROM (\(lineShiftsSQL)) WHERE month = ?\(notOnCards)
                GROUP BY kind, currency, category_id, payment
                """, arguments: [month, month]
        ).map(part)
        guard !cards.isEmpty, let (year, number) = monthNumbers(month) else { return parts }
        // A card purchase is due at most two months after the month it was made in.
        let index = CardCycle.index(year: year, month: number)
        var billed: [String] = []
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT id, account_id, kind, currency, category_id, payment, amount, date FROM expenses
                WHERE account_id IN (\(cards.keys.sorted().map { "'\($0)'" }.joined(separator: ","))) AND month >= ? AND month <= ?
                """, arguments: [CardCycle.text(index - 2), month])
        {
            guard let cycle = cards[row["account_id"]], let date = DateTime(iso8601: row["date"]) else { continue }
            guard cycle.billMonth(ofDay: date.localDayNumber) == index else { continue }
            billed.append(row["id"])
            parts.append(
                MonthPart(
                    kind: row["kind"], currency: row["currency"], category: row["category_id"], payment: row["payment"], amount: AmountSum(row["amount"]),
                    count: 1))
        }
        // The lines of the split receipts among them, 500 ids at a time.
        var start = 0
        while start < billed.count {
            let chunk = Array(billed[start..<min(billed.count, start + 500)])
            parts += try Row.fetchAll(
                db,
                sql: """
                    SELECT kind, currency, category_id, payment, \(splitSum("amount")), 0 FROM (\(lineShiftsSQL))
                    WHERE expense_id IN (\(chunk.map { _ in "?" }.joined(separator: ","))) GROUP BY kind, currency, category_id, payment
                    """, arguments: StatementArguments(chunk)
            ).map(part)
            start += 500
        }
        return parts
    }

    /// Every card with a closing day, by id.
    static func cardCycles(_ db: Database) throws -> [String: CardCycle] {
        var cycles: [String: CardCycle] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, closing_day, payment_day FROM accounts WHERE closing_day IS NOT NULL") {
            if let closing = row["closing_day"] as Int?, let cycle = CardCycle(closingDay: closing, paymentDay: row["payment_day"]) {
                cycles[row["id"]] = cycle
            }
        }
        return cycles
    }

    /// `YYYY-MM` as numbers.
    static func monthNumbers(_ month: String) -> (Int, Int)? {
        let halves = month.split(separator: "-")
        guard halves.count == 2, let year = Int(halves[0]), let number = Int(halves[1]), (1...12).contains(number) else { return nil }
        return (year, number)
    }

    private static func part(_ row: Row) -> MonthPart {
        typealias C = GroupColumn
        return MonthPart(
            kind: row[C.kind.rawValue], currency: row[C.currency.rawValue], category: row[C.categoryID.rawValue], payment: row[C.payment.rawValue],
            amount: AmountSum(row, C.amount.rawValue), count: row[C.count.rawValue])
    }
}
