/// A card's statement cycles over time (issue 34, docs/HOUSEHOLD.md "Card bills"): its closing
/// and payment days as they were set, each change applying from the statement of the month
/// after the one it was made in — so that changing a card's closing day re-draws no statement
/// that already closed. Each statement month uses its own cycle (`CardCycle`): a purchase after
/// one month's close (by that month's day) is on the next month's statement (closing by its day).
public struct CardSchedule: Sendable, Equatable {
    /// From a month on (`CardCycle.MonthIndex`), the card's cycle — nil: no statements then
    /// (its closing day was cleared).
    public struct Change: Sendable, Equatable {
        public var from: CardCycle.MonthIndex
        public var cycle: CardCycle?

        public init(from: CardCycle.MonthIndex, cycle: CardCycle?) { (self.from, self.cycle) = (from, cycle) }
    }

    /// In month order; the first applies to every month before it too.
    public let changes: [Change]

    /// A schedule of `changes` (sorted here; of two from one month, the later given wins).
    public init(_ changes: [Change]) {
        var kept: [Change] = []
        for change in changes.enumerated().sorted(by: { ($0.element.from, $0.offset) < ($1.element.from, $1.offset) }).map(\.element) {
            if kept.last?.from == change.from { kept[kept.count - 1] = change } else { kept.append(change) }
        }
        self.changes = kept
    }

    /// One cycle for every month.
    public init(_ cycle: CardCycle) { self.init([Change(from: .min, cycle: cycle)]) }

    /// The cycle of statement month `month`.
    public func cycle(for month: CardCycle.MonthIndex) -> CardCycle? {
        (changes.last { $0.from <= month } ?? changes.first)?.cycle
    }

    /// The day the statement of `month` closes; nil when the card had no statements then.
    public func closes(_ month: CardCycle.MonthIndex) -> Int? { cycle(for: month)?.closes(month) }

    /// The day the statement of `month` is due.
    public func due(_ month: CardCycle.MonthIndex) -> Int? { cycle(for: month)?.due(month) }

    /// How far a statement looks past months with no statements (the card's closing day was
    /// cleared a while): two years.
    public static let furthestGap = 24

    /// The month of the first statement closing after `month`, if any within `furthestGap`.
    public func nextClosing(after month: CardCycle.MonthIndex) -> CardCycle.MonthIndex? {
        (1...Self.furthestGap).lazy.map { month + $0 }.first { closes($0) != nil }
    }

    /// The month of the last statement closing before `month`, if any within `furthestGap`.
    public func previousClosing(before month: CardCycle.MonthIndex) -> CardCycle.MonthIndex? {
        (1...Self.furthestGap).lazy.map { month - $0 }.first { closes($0) != nil }
    }

    /// The statement a purchase on `day` is on: its own month's, if that closes on or after it,
    /// else the next statement's (after months with none, the first there is); nil when none follows.
    public func statement(ofDay day: Int) -> CardCycle.MonthIndex? {
        let here = CardCycle.monthIndex(ofDay: day)
        if let close = closes(here), day <= close { return here }
        return nextClosing(after: here)
    }

    /// The statement a payment on `day` pays (as `CardCycle.statementPaid`, month by month):
    /// the one before the last that closed before it, while that one is not yet past its due
    /// day; else the last that closed before it (across months with no statements).
    public func statementPaid(onDay day: Int) -> CardCycle.MonthIndex? {
        let here = CardCycle.monthIndex(ofDay: day)
        guard let lastClosed = (closes(here).map { day > $0 } ?? false) ? here : previousClosing(before: here) else { return nil }
        if let before = previousClosing(before: lastClosed), let close = closes(before), let due = due(before), close < day, day <= due { return before }
        return lastClosed
    }

    /// The month a purchase on `day` is paid in (the month its statement is due); nil when it
    /// is on no statement.
    public func billMonth(ofDay day: Int) -> CardCycle.MonthIndex? {
        statement(ofDay: day).flatMap(due).map(CardCycle.monthIndex(ofDay:))
    }
}
