import Foundation
import TallyCore

/// A past point to read the ledger at (`--as-of`, `?asOf=`): a log index of this replica, or
/// a moment, which stands for the log index its views had reached by the end of that second
/// (`Projector.index(atEndOf:)`). Both answer exactly what the views showed then on this
/// replica; a moment before the views' first projection is index 0, the empty ledger.
public enum AsOf: Sendable, Equatable {
    case index(UInt64)
    /// Unix seconds: everything the views showed by the end of this second.
    case endOfSecond(Int64)

    /// Reads `text`: digits are a log index; `YYYY-MM-DDTHH:MM[:SS[.fff]]` with `Z` or an
    /// offset is that moment, without one it is local time in `timeZone`; a bare `YYYY-MM-DD`
    /// is the end of that day there (as a statement's "balance as of" means).
    public init(parsing text: String, timeZone: TimeZone = .current) throws(ValidationError) {
        let problem = ValidationError(field: "asOf", "must be a log index (digits) or a date-time such as 2026-03-31T23:59 "
                                          + "(local time unless it ends in Z or an offset like +09:00) or a day, 2026-03-31")
        if !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            guard let index = UInt64(text) else { throw problem }
            self = .index(index)
            return
        }
        guard text.utf8.count <= 40 else { throw problem }
        if text.utf8.count == 10, let midnight = DateTime(iso8601: text, timeZone: timeZone) {
            // The end of the day: the second before the next local midnight (36 hours on is
            // within the next day whatever the clocks did).
            let later = midnight.epochMillis + 36 * 3_600_000
            let offset = timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(later) / 1000))
            let day = DateTime(epochMillis: later, offsetMinutes: Int16(offset / 60)).localFields
            let nextDay = String(format: "%04d-%02d-%02d", day.year, day.month, day.day)
            guard let next = DateTime(iso8601: nextDay, timeZone: timeZone) else { throw problem }
            self = .endOfSecond(Self.floorSeconds(next.epochMillis) - 1)
            return
        }
        if let moment = DateTime(iso8601: text, timeZone: timeZone) {
            self = .endOfSecond(Self.floorSeconds(moment.epochMillis))
            return
        }
        // No offset: local wall-clock time in `timeZone`.
        guard let wall = DateTime(iso8601: text + "Z") else { throw problem }
        let guess = Date(timeIntervalSince1970: Double(wall.epochMillis) / 1000)
        var offset = timeZone.secondsFromGMT(for: guess)
        offset = timeZone.secondsFromGMT(for: guess.addingTimeInterval(TimeInterval(-offset)))
        self = .endOfSecond(Self.floorSeconds(wall.epochMillis) - Int64(offset))
    }

    private static func floorSeconds(_ millis: Int64) -> Int64 {
        millis >= 0 ? millis / 1000 : -((-millis + 999) / 1000)
    }
}
