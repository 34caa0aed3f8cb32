import PropertyBased
import Testing
import TallyCore
import TallyTestSupport

/// A challenge's streaks (issue 18): current, longest and completion rate, against examples
/// and against a day-by-day count written independently.
@Suite struct TodoStreakTests {
    @Test func examples() {
        let start = 20_000
        // ✓✓·✓✓✓· : today is day 5 (checked) → current 3, longest 3; 5 of 6 days so far.
        let checks = [true, true, false, true, true, true, false, false]
        #expect(Todo.streaks(checks, start: start, today: start + 5) == .init(current: 3, longest: 3, completionRate: 83.33))
        // Today (day 6) still open: the run up to yesterday counts.
        #expect(Todo.streaks(checks, start: start, today: start + 6).current == 3)
        // Tomorrow, with day 6 left open, the streak is broken.
        #expect(Todo.streaks(checks, start: start, today: start + 7).current == 0)
        // Before the start: nothing yet; after the end: the run the last day ends (here none).
        #expect(Todo.streaks(checks, start: start, today: start - 1) == .init(current: 0, longest: 0, completionRate: 0), "nothing counts yet")
        #expect(Todo.streaks([false, true, true, true], start: start, today: start + 1).longest == 1, "ticks on days to come count for nothing")
        #expect(Todo.streaks(checks, start: start, today: start + 100) == .init(current: 0, longest: 3, completionRate: 62.5))
        #expect(Todo.streaks([true, true], start: start, today: start + 100).current == 2, "ended on a checked day")
        #expect(Todo.streaks([], start: start, today: start) == .init(current: 0, longest: 0, completionRate: 0))
    }

    @Test func streaksAgreeWithADayByDayCount() async {
        await propertyCheck(count: 500, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = SplitMix64(seed: seed)
            let checks = (0..<Int.random(in: 0...40, using: &rng)).map { _ in Bool.random(using: &rng) }
            let today = Int.random(in: -3...45, using: &rng)
            let streaks = Todo.streaks(checks, start: 0, today: today)
            // Independently: walk back from the last day that has passed (today counts only if checked).
            var current = 0
            if today >= 0, !checks.isEmpty {
                var days = Array(checks.prefix(min(today + 1, checks.count)))
                if today < checks.count, days.last == false { days.removeLast() }
                current = days.reversed().prefix { $0 }.count
            }
            var longest = 0
            let soFar = Array(checks.prefix(max(0, min(checks.count, today + 1))))
            for startIndex in soFar.indices {
                longest = max(longest, soFar[startIndex...].prefix { $0 }.count)
            }
            #expect(streaks.current == current, "\(checks) today \(today)")
            #expect(streaks.longest == longest)
            #expect(streaks.current <= streaks.longest)
            #expect((0...100).contains(streaks.completionRate))
        }
    }
}
