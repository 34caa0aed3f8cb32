/// A card's statement cycles (issue 34, docs/HOUSEHOLD.md "Card bills"): a statement closes on
/// its closing day each month (the month's last day where it has fewer days: a card closing on
/// the 31st closes on February 28th), and holds every purchase made after the previous close up
/// to and including that day. Its bill is due on the first payment day after it closes (the
/// same clamping): closing on the 14th and paying on the 1st, March's statement — February 15th
/// to March 14th — is due on April 1st. Days are calendar days as day numbers (days since
/// 1970-01-01), each purchase counted on the day of its own time zone.
public struct CardCycle: Sendable, Equatable {
    public let closingDay: Int
    public let paymentDay: Int

    /// Days 1…31; nil when either is not.
    public init?(closingDay: Int, paymentDay: Int?) {
        let payment = paymentDay ?? closingDay
        guard (1...31).contains(closingDay), (1...31).contains(payment) else { return nil }
        (self.closingDay, self.paymentDay) = (closingDay, payment)
    }

    /// A month as one number (year × 12 + month − 1), so months add and compare.
    public typealias MonthIndex = Int

    public static func month(_ index: MonthIndex) -> (year: Int, month: Int) {
        let year = index >= 0 ? index / 12 : (index - 11) / 12
        return (year, index - year * 12 + 1)
    }

    public static func index(year: Int, month: Int) -> MonthIndex { year * 12 + month - 1 }

    /// The index of a month written `YYYY-MM` (as `text` writes it); nil for anything else.
    public static func index(parsing text: String) -> MonthIndex? {
        let halves = text.split(separator: "-", omittingEmptySubsequences: false)
        guard halves.count == 2, halves[0].count == 4, halves[1].count == 2, let year = Int(halves[0]), let month = Int(halves[1]), (1...12).contains(month)
        else { return nil }
        return index(year: year, month: month)
    }

    /// `YYYY-MM` of a month index.
    public static func text(_ index: MonthIndex) -> String {
        let (year, month) = month(index)
        return (year < 1000 ? String(repeating: "0", count: 4 - String(year).count) : "") + "\(year)-" + (month < 10 ? "0" : "") + "\(month)"
    }

    /// The day the statement of `month` closes.
    public func closes(_ month: MonthIndex) -> Int { Self.day(clamping: closingDay, in: month) }

    /// The statement a purchase made on `day` is on: the month whose close is the first on or
    /// after it.
    public func statement(ofDay day: Int) -> MonthIndex {
        let (year, month, _) = DateTime.civil(fromDays: day)
        let here = Self.index(year: year, month: month)
        return day <= closes(here) ? here : here + 1
    }

    /// The statement a payment made on `day` pays: the oldest one that closed before it and is
    /// not yet past its due day — so that closing on the 30th and paying on the 31st, a payment
    /// on May 31st pays April's statement (due that day), not May's (closed the day before) —
    /// else the one that closed last before it.
    public func statementPaid(onDay day: Int) -> MonthIndex {
        let lastClosed = statement(ofDay: day) - 1
        let before = lastClosed - 1
        return closes(before) < day && day <= due(before) ? before : lastClosed
    }

    /// The day the statement of `month` is due: the first payment day after it closes.
    public func due(_ month: MonthIndex) -> Int {
        let close = closes(month)
        let same = Self.day(clamping: paymentDay, in: month)
        return same > close ? same : Self.day(clamping: paymentDay, in: month + 1)
    }

    /// The month `day` is in.
    public static func monthIndex(ofDay day: Int) -> MonthIndex {
        let (year, month, _) = DateTime.civil(fromDays: day)
        return index(year: year, month: month)
    }

    /// The first day of `month`.
    public static func firstDay(of month: MonthIndex) -> Int { day(clamping: 1, in: month) }

    /// Day `day` of `month`, or the month's last day where it has fewer.
    static func day(clamping day: Int, in month: MonthIndex) -> Int {
        let (year, number) = Self.month(month)
        return DateTime.days(fromCivil: year, number, min(day, DateTime.daysIn(month: number, year: year)))
    }

    /// `YYYY-MM-DD` of a day number.
    public static func dayText(_ day: Int) -> String {
        let (year, month, date) = DateTime.civil(fromDays: day)
        return text(index(year: year, month: month)) + "-" + (date < 10 ? "0" : "") + "\(date)"
    }
}
