/// A total of amounts in minor units that says so, instead of trapping, when it no longer
/// fits in an Int64.
///
/// Each amount is at most `Limits.maxAmount` (10^15), so about 9,000 of them can already
/// overflow; a total is user data, and user data must never crash a summary. Once overflowed,
/// a sum stays overflowed and has no value.
public struct AmountSum: Sendable, Equatable {
    /// The total, or nil when it does not fit in an Int64.
    public private(set) var value: Int64? = 0

    /// Zero.
    public init() {}

    /// A known total.
    public init(_ value: Int64) { self.value = value }

    /// The sum that SQL hands over in two parts, `high × 10^9 + low` (see
    /// `ProjectionQueries`: each part is summed by SQLite without risk of overflow).
    public init(high: Int64, low: Int64) {
        let (scaled, overflowA) = high.multipliedReportingOverflow(by: 1_000_000_000)
        let (total, overflowB) = scaled.addingReportingOverflow(low)
        value = overflowA || overflowB ? nil : total
    }

    /// Adds another total.
    public mutating func add(_ other: AmountSum) {
        guard let mine = value, let theirs = other.value else { value = nil; return }
        let (total, overflow) = mine.addingReportingOverflow(theirs)
        value = overflow ? nil : total
    }

    /// `self − other`, or an overflowed sum.
    public func minus(_ other: AmountSum) -> AmountSum {
        guard let mine = value, let theirs = other.value else { return AmountSum(unknown: ()) }
        let (difference, overflow) = mine.subtractingReportingOverflow(theirs)
        return overflow ? AmountSum(unknown: ()) : AmountSum(difference)
    }

    /// Whether the total did not fit.
    public var overflowed: Bool { value == nil }

    private init(unknown: Void) { value = nil }
}
