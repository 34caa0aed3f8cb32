import Testing
import TallyCore
import TallyTestSupport

/// Which days a recurring rule has occurrences on: month ends, leap years, counts, ends.
@Suite struct RecurrenceDaysTests {
    func days(_ start: String, _ cadence: String, monthEnd: String = "clamp", end: String? = nil, count: Int? = nil, through: String) -> [String] {
        Recurrence.days(
            start: Recurrence.day(start)!, cadence: cadence, monthEnd: monthEnd, end: end.flatMap(Recurrence.day), count: count,
            through: Recurrence.day(through)!
        ).map(Recurrence.dayText)
    }

    @Test func monthlyOnTheThirtyFirstClampsOrSkips() {
        #expect(days("2026-01-31", "monthly", through: "2026-05-31") == ["2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30", "2026-05-31"])
        #expect(days("2026-01-31", "monthly", monthEnd: "skip", through: "2026-05-31") == ["2026-01-31", "2026-03-31", "2026-05-31"])
        #expect(days("2026-11-30", "monthly", through: "2027-03-01") == ["2026-11-30", "2026-12-30", "2027-01-30", "2027-02-28"], "across the year end")
        #expect(days("2024-01-29", "monthly", through: "2024-03-01") == ["2024-01-29", "2024-02-29"], "a leap February has the 29th")
        #expect(days("2025-01-29", "monthly", monthEnd: "skip", through: "2025-03-29") == ["2025-01-29", "2025-03-29"])
    }

    @Test func yearlyOnFebruaryTwentyNinth() {
        #expect(days("2024-02-29", "yearly", through: "2028-12-31") == ["2024-02-29", "2025-02-28", "2026-02-28", "2027-02-28", "2028-02-29"])
        #expect(days("2024-02-29", "yearly", monthEnd: "skip", through: "2028-12-31") == ["2024-02-29", "2028-02-29"])
        #expect(days("2100-02-28", "yearly", through: "2101-03-01") == ["2100-02-28", "2101-02-28"], "2100 is no leap year")
    }

    @Test func dailyWeeklyCountsAndEnds() {
        #expect(days("2026-02-26", "daily", through: "2026-03-02") == ["2026-02-26", "2026-02-27", "2026-02-28", "2026-03-01", "2026-03-02"])
        #expect(days("2024-02-26", "daily", count: 4, through: "2024-12-31") == ["2024-02-26", "2024-02-27", "2024-02-28", "2024-02-29"])
        #expect(days("2026-01-29", "weekly", end: "2026-02-19", through: "2026-12-31") == ["2026-01-29", "2026-02-05", "2026-02-12", "2026-02-19"])
        #expect(
            days("2026-01-31", "monthly", monthEnd: "skip", count: 3, through: "2026-12-31") == ["2026-01-31", "2026-03-31", "2026-05-31"],
            "a skipped month does not count")
        #expect(days("2026-05-01", "daily", through: "2026-04-30").isEmpty, "nothing before the start")
        #expect(days("2026-05-01", "daily", end: "2026-04-01", through: "2026-12-31").isEmpty)
        #expect(days("9999-11-30", "monthly", through: "9999-12-31") == ["9999-11-30", "9999-12-30"], "stops at the last supported year")
    }

    @Test func fromSkipsEarlierOccurrencesButTheyStillCount() {
        func from(_ start: String, _ cadence: String, count: Int? = nil, from: String, through: String) -> [String] {
            Recurrence.days(
                start: Recurrence.day(start)!, cadence: cadence, monthEnd: "clamp", end: nil, count: count,
                through: Recurrence.day(through)!, from: Recurrence.day(from)!
            ).map(Recurrence.dayText)
        }
        #expect(from("0001-01-01", "daily", from: "2026-11-22", through: "2026-11-24") == ["2026-11-22", "2026-11-23", "2026-11-24"])
        #expect(from("2026-01-01", "weekly", from: "2026-01-09", through: "2026-01-23") == ["2026-01-15", "2026-01-22"])
        #expect(from("2026-01-31", "monthly", count: 3, from: "2026-03-01", through: "2026-12-31") == ["2026-03-31"], "two counted before")
        #expect(from("2026-01-01", "daily", count: 5, from: "2026-01-10", through: "2026-12-31").isEmpty)
    }

    /// A monthly or yearly rule without a count jumps to `from` instead of walking there from
    /// its start: the days it gives are those of the walk from the start at or after `from`,
    /// for random starts in years 1–9999, month ends clamped or skipped.
    @Test(arguments: 0..<4) func aJumpToFromGivesTheDaysOfTheWalk(seed: Int) {
        var random = SplitMix64(seed: UInt64(seed))
        let (first, last) = (Recurrence.day("0001-01-01")!, Recurrence.day("9999-12-31")!)
        for _ in 0..<500 {
            let start = first + Int(random.next() % UInt64(last - first))
            let cadence = random.next() % 2 == 0 ? "monthly" : "yearly"
            let monthEnd = random.next() % 2 == 0 ? "clamp" : "skip"
            let from = start + Int(random.next() % 20_000) - 1_000
            let through = from + Int(random.next() % 2_000)
            let walked = Recurrence.days(start: start, cadence: cadence, monthEnd: monthEnd, end: nil, count: nil, through: through)
                .filter { $0 >= from }
            let jumped = Recurrence.days(start: start, cadence: cadence, monthEnd: monthEnd, end: nil, count: nil, through: through, from: from)
            #expect(jumped == walked, "\(Recurrence.dayText(start)) \(cadence) \(monthEnd) from \(Recurrence.dayText(from))")
        }
    }

    @Test func dayTextIsStrict() {
        for bad in ["2026-02-30", "2026-13-01", "0000-01-01", "2026-1-01", "2026-01-01T00:00", " 2026-01-01", "２０２６-01-01", "2026/01/01"] {
            #expect(Recurrence.day(bad) == nil, "\(bad)")
        }
        #expect(Recurrence.day("2024-02-29").map(Recurrence.dayText) == "2024-02-29")
    }
}
