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

        /// The same taken away.
        var negated: MonthPart {
            var part = self
            (part.amount, part.count) = (AmountSum().minus(amount), -count)
            return part
        }
    }

    /// The month's parts by purchase date (`byBill` false) or by bill. A purchase is billed when
    /// it is on a card with a closing day, in the card's currency (what the card's bills hold:
    /// one in another currency is on no bill, and counts by purchase date).
    ///
    /// By bill is by purchase date, less the billed purchases made in the month, plus those
    /// whose bill is due in it: both read in one pass over each card's purchases of the months
    /// around it, summed per day of their own time zone (a day is billed whole).
    /// `schedules`: each card's days over time by id (`LedgerViews.cardSchedule`); a card not
    /// in it has its days now for every month.
    static func monthParts(_ db: Database, month: String, byBill: Bool, schedules: [String: CardSchedule] = [:]) throws -> [MonthPart] {
        var parts = try Row.fetchAll(
            db,
            sql: """
                SELECT kind, currency, category_id, payment, \(splitSum("amount")), COUNT(*) FROM expenses WHERE month = ?
                GROUP BY kind, currency, category_id, payment
                UNION ALL
                SELECT kind, currency, category_id, payment, \(splitSum("amount")), 0 FROM (\(lineShiftsSQL)) WHERE month = ?
                GROUP BY kind, currency, category_id, payment
                """, arguments: [month, month]
        ).map(part)
        guard byBill, let index = CardCycle.index(parsing: month) else { return parts }
        for card in try Row.fetchAll(db, sql: "SELECT id, currency, closing_day, payment_day FROM accounts ORDER BY id") {
            let now = (card["closing_day"] as Int?).flatMap { CardCycle(closingDay: $0, paymentDay: card["payment_day"]) }
            guard let schedule = schedules[card["id"]] ?? now.map(CardSchedule.init) else { continue }  // no card
            // What is due this month is on last month's statement or this month's, and holds the
            // purchases after the close before it (months with none in between reach further).
            // (None of them: still this month's purchases, which may be billed later.)
            let earliest = [index - 1, index].first { schedule.closes($0) != nil }
            let opensMonth = earliest.map { schedule.previousClosing(before: $0) ?? $0 - CardSchedule.furthestGap } ?? index
            // From the first day of `opensMonth` through this month's last, a day's margin each side.
            let (from, through) = (Int64(CardCycle.firstDay(of: opensMonth) - 1), Int64(CardCycle.firstDay(of: index + 1) + 1))
            let arguments: StatementArguments = [card["id"], card["currency"], from * 86_400_000, through * 86_400_000]
            for source in ["expenses", "(\(lineShiftsSQL))"] {
                for row in try Row.fetchAll(
                    db,
                    sql: """
                        SELECT kind, currency, category_id, payment, \(splitSum("amount")), \(source == "expenses" ? "COUNT(*)" : "0"), day FROM (
                            SELECT kind, currency, category_id, payment, amount, \(localDaySQL) AS day FROM \(source)
                            WHERE account_id = ? AND currency = ? AND date_ms >= ? AND date_ms < ?)
                        GROUP BY day, kind, currency, category_id, payment
                        """, arguments: arguments)
                {
                    let day: Int = row[GroupColumn.day.rawValue]  // the month's groups, and then each one's day
                    // On no statement (the card had none then): by purchase date, as it already is.
                    let madeIn = CardCycle.monthIndex(ofDay: day)
                    guard let billedIn = schedule.billMonth(ofDay: day), madeIn != billedIn else { continue }  // in this month either way, or in neither
                    if madeIn == index { parts.append(part(row).negated) }
                    if billedIn == index { parts.append(part(row)) }
                }
            }
        }
        return parts
    }

    /// A row's day in its own time zone (`DateTime.localDayNumber`): `date_ms` moved by the
    /// offset its `date` text ends with (`Z` or `±HH:MM`), floored to whole days.
    static let localDaySQL: String = {
        let local = """
            (date_ms + 60000 * CASE WHEN substr(date, -1) = 'Z' THEN 0
                ELSE (CASE substr(date, -6, 1) WHEN '-' THEN -1 ELSE 1 END) * (CAST(substr(date, -5, 2) AS INTEGER) * 60 + CAST(substr(date, -2, 2) AS INTEGER))
                END)
            """
        return "(CASE WHEN \(local) >= 0 THEN \(local) / 86400000 ELSE (\(local) - 86399999) / 86400000 END)"
    }()

    private static func part(_ row: Row) -> MonthPart {
        typealias C = GroupColumn
        return MonthPart(
            kind: row[C.kind.rawValue], currency: row[C.currency.rawValue], category: row[C.categoryID.rawValue], payment: row[C.payment.rawValue],
            amount: AmountSum(row, C.amount.rawValue), count: row[C.count.rawValue])
    }
}
