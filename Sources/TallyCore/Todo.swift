import Foundation

/// Derived values of a todo.
public enum Todo {
    /// Checks done / checks, as a percentage rounded to two decimals; 0 when there are none.
    /// Always derived from `checks`, never stored as an input.
    public static func percentage(_ checks: PropertyValue?) -> Double {
        guard case .bools(let flags)? = checks, !flags.isEmpty else { return 0 }
        let done = flags.filter { $0 }.count
        return (Double(done) * 10_000 / Double(flags.count)).rounded() / 100
    }
}

extension Todo {
    /// A challenge's streaks: its checks are one per day from its start date.
    public struct Streaks: Sendable, Equatable {
        /// Checked days in a row ending today — or yesterday, while today is still unchecked;
        /// after the challenge ended, the run its last day ends (0 if that day is unchecked).
        public var current: Int
        /// The longest run of checked days so far.
        public var longest: Int
        /// Checked days among the days so far (from the start to today or the end, whichever
        /// comes first), as a percentage rounded to two decimals; 0 before the start.
        public var completionRate: Double

        public init(current: Int, longest: Int, completionRate: Double) {
            (self.current, self.longest, self.completionRate) = (current, longest, completionRate)
        }
    }

    /// The streaks of `checks` for a challenge whose first day is day number `start` (days since
    /// 1970-01-01 in its own calendar), seen on day `today`.
    public static func streaks(_ checks: [Bool], start: Int, today: Int) -> Streaks {
        // Ticks on days still to come count for nothing yet.
        var longest = 0, run = 0
        for checked in checks.prefix(max(0, min(checks.count, today - start + 1))) {
            run = checked ? run + 1 : 0
            longest = max(longest, run)
        }
        let todayIndex = today - start
        guard todayIndex >= 0, !checks.isEmpty else { return Streaks(current: 0, longest: longest, completionRate: 0) }
        var day = min(todayIndex, checks.count - 1)
        if day == todayIndex, !checks[day] { day -= 1 }  // today may still be ticked
        var current = 0
        while day >= 0, checks[day] {
            current += 1
            day -= 1
        }
        let elapsed = min(todayIndex + 1, checks.count)
        let done = checks.prefix(elapsed).filter { $0 }.count
        return Streaks(current: current, longest: longest, completionRate: (Double(done) * 10_000 / Double(elapsed)).rounded() / 100)
    }
}

extension DateTime {
    /// The current time in this machine's UTC offset (read from the wall clock, like `HybridClock`).
    public static var nowHere: DateTime {
        let date = Date()
        return DateTime(
            epochMillis: Int64((date.timeIntervalSince1970 * 1000).rounded(.down)),
            offsetMinutes: Int16(TimeZone.current.secondsFromGMT(for: date) / 60))
    }

    /// Days since 1970-01-01 of this instant's calendar date in its own offset.
    public var localDayNumber: Int {
        Int((epochMillis + Int64(offsetMinutes) * 60_000).floorDiv(86_400_000))
    }
}
