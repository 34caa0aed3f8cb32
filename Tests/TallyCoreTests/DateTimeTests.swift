import Foundation
import Testing
import TallyCore

@Suite struct DateTimeTests {
    @Test(arguments: [
        "2026-03-01T09:30:00+09:00", "2026-03-01T00:00:00Z", "1969-12-31T23:59:59.999-05:30", "2024-02-29T12:00:00+14:00",
    ])
    func printsBackWhatWasParsed(_ text: String) throws {
        #expect(try #require(DateTime(iso8601: text)).description == text)
    }

    @Test func offsetsAreKeptAndOrderIsByInstant() throws {
        let seoul = try #require(DateTime(iso8601: "2026-03-01T09:00:00+09:00"))
        let utc = try #require(DateTime(iso8601: "2026-03-01T00:00:00Z"))
        #expect(seoul.epochMillis == utc.epochMillis)
        #expect(seoul.offsetMinutes == 540)
        #expect(seoul.localMonth == "2026-03")
        #expect(try #require(DateTime(iso8601: "2026-03-01T08:59:00+09:00")).localMonth == "2026-03")
        #expect(try #require(DateTime(iso8601: "2026-03-01T08:59:00+09:00")) < seoul)
    }

    @Test func aBareDateIsLocalMidnight() throws {
        let seoul = try #require(TimeZone(identifier: "Asia/Seoul"))
        let date = try #require(DateTime(iso8601: "2026-03-01", timeZone: seoul))
        #expect(date.description == "2026-03-01T00:00:00+09:00")
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        #expect(try #require(DateTime(iso8601: "2026-07-04", timeZone: newYork)).description == "2026-07-04T00:00:00-04:00")
    }

    @Test(arguments: ["2026-13-01", "2026-02-30", "2026-3-1", "2026-03-01T25:00Z", "2026-03-01T10:00", "yesterday", "", "2026-03-01T10:00:00+19:00", "2026-03-01x"])
    func rejectsMalformedDates(_ text: String) {
        #expect(DateTime(iso8601: text) == nil)
    }
}
