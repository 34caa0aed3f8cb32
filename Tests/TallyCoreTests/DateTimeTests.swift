import Foundation
import Testing
import TallyCore
import TallyTestSupport

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

    /// The hand formatter against a plain one built from the calendar fields, over ±30,000 years
    /// and every offset, five-digit and negative years included.
    @Test func formatsLikeAPlainFormatter() {
        func padded(_ value: Int, _ digits: Int) -> String {
            let magnitude = String(value.magnitude)
            return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, digits - magnitude.count)) + magnitude
        }
        var rng = SplitMix64(seed: 5)
        var cases = [DateTime(epochMillis: 253_402_300_800_000, offsetMinutes: 0), DateTime(epochMillis: -62_198_755_200_001, offsetMinutes: -60)]
        for _ in 0..<20_000 {
            cases.append(
                DateTime(
                    epochMillis: Int64.random(in: -1_000_000_000_000_000...1_000_000_000_000_000, using: &rng),
                    offsetMinutes: Int16.random(in: -1_080...1_080, using: &rng)))
        }
        for date in cases {
            let f = date.localFields
            var expected = "\(padded(f.year, 4))-\(padded(f.month, 2))-\(padded(f.day, 2))T\(padded(f.hour, 2)):\(padded(f.minute, 2)):\(padded(f.second, 2))"
            if f.millis != 0 { expected += "." + padded(f.millis, 3) }
            let offset = Int(date.offsetMinutes)
            expected += offset == 0 ? "Z" : (offset < 0 ? "-" : "+") + padded(abs(offset) / 60, 2) + ":" + padded(abs(offset) % 60, 2)
            #expect(date.description == expected)
            #expect(date.localMonth == "\(padded(f.year, 4))-\(padded(f.month, 2))")
        }
        #expect(cases[0].description == "10000-01-01T00:00:00Z")
        #expect(cases[1].description == "-0002-12-31T22:59:59.999-01:00")
    }

    @Test(arguments: [
        "2026-13-01", "2026-02-30", "2026-3-1", "2026-03-01T25:00Z", "2026-03-01T10:00", "yesterday", "", "2026-03-01T10:00:00+19:00", "2026-03-01x",
    ])
    func rejectsMalformedDates(_ text: String) {
        #expect(DateTime(iso8601: text) == nil)
    }
}
