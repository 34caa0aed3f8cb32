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
        let problem = ValidationError(
            field: "asOf",
            "must be a log index (digits) or a date-time such as 2026-03-31T23:59 "
                + "(local time unless it ends in Z or an offset like +09:00) or a day, 2026-03-31")
        if !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            guard text.utf8.count <= 19, let index = UInt64(text) else { throw problem }
            self = .index(index)
            return
        }
        guard text.utf8.count <= 40 else { throw problem }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        if text.utf8.count == 10, let day = DateTime(iso8601: text + "T12:00:00Z") {
            // The end of the day: the second before the next day starts there (its midnight, or
            // the first instant after it where clocks skip midnight).
            let fields = day.localFields
            guard let noon = calendar.date(from: DateComponents(year: fields.year, month: fields.month, day: fields.day, hour: 12)),
                let next = calendar.date(byAdding: .day, value: 1, to: noon).map({ calendar.startOfDay(for: $0) })
            else { throw problem }
            self = .endOfSecond(Int64(next.timeIntervalSince1970.rounded(.down)) - 1)
            return
        }
        if let moment = DateTime(iso8601: text, timeZone: timeZone) {
            self = .endOfSecond(Self.floorSeconds(moment.epochMillis))
            return
        }
        // No offset: local wall-clock time there (an hour repeated when clocks go back is its
        // first occurrence; a time skipped when they go forward, the instant after the gap).
        guard let wall = DateTime(iso8601: text + "Z") else { throw problem }
        let f = wall.localFields
        guard let local = calendar.date(from: DateComponents(year: f.year, month: f.month, day: f.day, hour: f.hour, minute: f.minute, second: f.second))
        else { throw problem }
        self = .endOfSecond(Int64(local.timeIntervalSince1970.rounded(.down)))
    }

    private static func floorSeconds(_ millis: Int64) -> Int64 {
        millis >= 0 ? millis / 1000 : -((-millis + 999) / 1000)
    }
}
