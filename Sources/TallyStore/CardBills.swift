import Foundation
import GRDB
import TallyCore

/// One statement of a card (issue 34): what was charged in its cycle, the cancellations and
/// refunds in it netted, when it is due, and what was paid into the card before the next close.
public struct CardBill: Sendable, Equatable {
    /// The month it closes in, `YYYY-MM`.
    public var month: String
    /// The cycle's first and last days, and the day it is due (`YYYY-MM-DD`).
    public var from: String
    public var to: String
    public var due: String
    /// Purchases in the cycle, and incomes on the card in it (cancellations, refunds).
    public var charged: AmountSum
    public var cancelled: AmountSum
    /// Charged less cancelled: what the bill asks for.
    public var amount: AmountSum { charged.minus(cancelled) }
    /// Transfers into the card after the close, up to the next close.
    public var paid: AmountSum
}

extension ProjectionQueries {
    /// The statements of card `id` that close in months `from` … `to` (month indexes), from its
    /// expenses in its currency and the transfers into it; nil when it is not an account with
    /// a closing day.
    public static func cardBills(
        _ db: Database, accountID id: String, from: CardCycle.MonthIndex, to: CardCycle.MonthIndex, schedule given: CardSchedule? = nil
    ) throws -> [CardBill]? {
        guard let account = try Row.fetchOne(db, sql: "SELECT currency, closing_day, payment_day FROM accounts WHERE id = ?", arguments: [id]) else {
            return nil
        }
        // The card's days over time (`LedgerViews.cardSchedule`: statements that closed stay,
        // even once its closing day is cleared), else its days now for every month.
        let now = (account["closing_day"] as Int?).flatMap { CardCycle(closingDay: $0, paymentDay: account["payment_day"]) }
        guard let schedule = given ?? now.map(CardSchedule.init), schedule.changes.contains(where: { $0.cycle != nil }) else { return nil }
        let currency: String = account["currency"]
        /// The day after the statement before `month` closed (the first day a purchase on it can have).
        func opens(_ month: CardCycle.MonthIndex) -> Int {
            schedule.previousClosing(before: month).flatMap(schedule.closes).map { $0 + 1 } ?? CardCycle.firstDay(of: month - CardSchedule.furthestGap)
        }
        // The rows of the days the statements span, with a day's margin for time zones.
        let first = opens(from) - 2
        let last =
            max(schedule.nextClosing(after: to).flatMap(schedule.closes) ?? CardCycle.firstDay(of: to + CardSchedule.furthestGap), schedule.due(to) ?? 0) + 1
        let (low, high) = (Int64(first) * 86_400_000, Int64(last + 1) * 86_400_000)
        var charged: [Int: AmountSum] = [:], cancelled: [Int: AmountSum] = [:], paid: [Int: AmountSum] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT kind, amount, date FROM expenses WHERE account_id = ? AND currency = ? AND date_ms >= ? AND date_ms < ?",
            arguments: [id, currency, low, high])
        {
            guard let date = DateTime(iso8601: row["date"]), let statement = schedule.statement(ofDay: date.localDayNumber) else { continue }
            if row["kind"] as String == "income" {
                cancelled[statement, default: AmountSum()].add(AmountSum(row["amount"]))
            } else {
                charged[statement, default: AmountSum()].add(AmountSum(row["amount"]))
            }
        }
        for row in try Row.fetchAll(
            db, sql: "SELECT COALESCE(to_amount, amount) AS arriving, date FROM transfers WHERE to_account_id = ? AND date_ms >= ? AND date_ms < ?",
            arguments: [id, low, high])
        {
            guard let date = DateTime(iso8601: row["date"]), let statement = schedule.statementPaid(onDay: date.localDayNumber) else { continue }
            paid[statement, default: AmountSum()].add(AmountSum(row["arriving"]))
        }
        return (from...max(from, to)).compactMap { month in
            guard let close = schedule.closes(month), let due = schedule.due(month) else { return nil }  // no statement that month
            return CardBill(
                month: CardCycle.text(month), from: CardCycle.dayText(opens(month)),
                to: CardCycle.dayText(close), due: CardCycle.dayText(due), charged: charged[month] ?? AmountSum(),
                cancelled: cancelled[month] ?? AmountSum(), paid: paid[month] ?? AmountSum())
        }
    }
}
