import Foundation

/// Recurring entries (issue 18, docs/HOUSEHOLD.md): which days a rule has occurrences on. (The
/// id each occurrence gets, derived from the rule and the day, is `OccurrenceID` in TallyLedger.)
public enum Recurrence {
    public static let cadences = ["daily", "weekly", "monthly", "yearly"]
    /// For a monthly or yearly rule starting on a day some months lack (the 29th–31st, or
    /// February 29th): `clamp` uses the month's last day, `skip` leaves the month out.
    public static let monthEnds = ["clamp", "skip"]

    /// A calendar day as days since 1970-01-01.
    public typealias Day = Int

    /// The days of a rule's occurrences from `start` through `through` (inclusive), in order:
    /// at most `count` occurrences counted from the start (skipped months do not count; days a
    /// person skipped do), none after `end`, only those on or after `from`, and never more than
    /// `limit`.
    public static func days(
        start: Day, cadence: String, monthEnd: String, end: Day?, count: Int?, through: Day, from: Day? = nil,
        limit: Int = 100_000
    ) -> [Day] {
        let last = min(through, end ?? through)
        guard last >= start else { return [] }
        var days: [Day] = []
        let (year, month, day) = DateTime.civil(fromDays: start)
        // Daily and weekly rules jump straight to `from`; monthly and yearly ones jump to the
        // period before `from`'s when they have no count, and otherwise walk there counting the
        // occurrences they pass (at most `count` and the months skipped between them). Before,
        // every one walked from its start: a rule begun in year 1 took 24,000 steps at each
        // listing and each recurrence pass.
        var step = 0, passed = 0
        if let from, from > start, cadence == "daily" || cadence == "weekly" {
            let stride = cadence == "daily" ? 1 : 7
            step = (from - start + stride - 1) / stride
            passed = step
        } else if let from, from > start, count == nil, cadence == "monthly" || cadence == "yearly" {
            let (fromYear, fromMonth, _) = DateTime.civil(fromDays: from)
            let months = (fromYear - year) * 12 + (fromMonth - month)
            step = max(0, (cadence == "monthly" ? months : months / 12) - 1)  // occurrences before `from` are left out below
        }
        while days.count < limit, count.map({ passed < $0 }) ?? true {
            let next: Day?
            switch cadence {
            case "daily": next = start + step
            case "weekly": next = start + 7 * step
            case "monthly", "yearly":
                let months = (month - 1) + (cadence == "monthly" ? step : 12 * step)
                let (y, m) = (year + months / 12, months % 12 + 1)
                guard y <= 9999 else { return days }
                let length = DateTime.daysIn(month: m, year: y)
                next = day <= length ? DateTime.days(fromCivil: y, m, day) : monthEnd == "skip" ? nil : DateTime.days(fromCivil: y, m, length)
            default: return days
            }
            step += 1
            guard let next else { continue }
            if next > last { break }
            passed += 1
            if let from, next < from { continue }
            days.append(next)
        }
        return days
    }

    /// `YYYY-MM-DD` of a day.
    public static func dayText(_ day: Day) -> String {
        let (y, m, d) = DateTime.civil(fromDays: day)
        return DateTime.ASCIIText.make(capacity: 32) { text in
            text.append(y, digits: 4)
            text.append("-")
            text.append(m, digits: 2)
            text.append("-")
            text.append(d, digits: 2)
        }
    }

    /// The day `YYYY-MM-DD` names, if it is a real date of the years 0001–9999.
    public static func day(_ text: String) -> Day? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, parts.map(\.count) == [4, 2, 2],
            text.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (48...57).contains($0) }),
            let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]), y >= 1, (1...12).contains(m),
            (1...DateTime.daysIn(month: m, year: y)).contains(d)
        else { return nil }
        return DateTime.days(fromCivil: y, m, d)
    }
}
