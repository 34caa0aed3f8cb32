import Foundation
import Testing
import TallyCore
import TallyLedger

/// `AsOf(parsing:)`: digits are a log index; a date-time is a moment (local time without an
/// offset, with the clocks' gaps and repeats handled one way); a bare day is its end.
@Suite struct AsOfParsingTests {
    static let seoul = TimeZone(identifier: "Asia/Seoul")!
    static let newYork = TimeZone(identifier: "America/New_York")!
    static let santiago = TimeZone(identifier: "America/Santiago")!

    static func seconds(_ iso: String) -> Int64 { DateTime(iso8601: iso)!.epochMillis / 1000 }

    @Test func digitsAreALogIndexOfAtMost19Digits() throws {
        #expect(try AsOf(parsing: "0") == .index(0))
        #expect(try AsOf(parsing: "120000") == .index(120_000))
        #expect(try AsOf(parsing: "9999999999999999999") == .index(9_999_999_999_999_999_999))
        #expect(throws: ValidationError.self) { try AsOf(parsing: "18446744073709551615") }  // 20 digits
        for bad in ["", "-1", "+1", "1e3", "１２", "٣", " 1", "1 ", "0x1"] {
            #expect(throws: ValidationError.self, "\(bad)") { try AsOf(parsing: bad) }
        }
    }

    @Test func aMomentIsTheEndOfItsSecond() throws {
        #expect(try AsOf(parsing: "2026-03-31T23:59Z", timeZone: Self.seoul) == .endOfSecond(Self.seconds("2026-03-31T23:59:00Z")))
        #expect(try AsOf(parsing: "2026-03-31T23:59:30.999+09:00") == .endOfSecond(Self.seconds("2026-03-31T14:59:30Z")))
        #expect(try AsOf(parsing: "2026-03-31T23:59", timeZone: Self.seoul) == .endOfSecond(Self.seconds("2026-03-31T14:59:00Z")))
        #expect(try AsOf(parsing: "1960-01-01T00:00:00.5Z") == .endOfSecond(Self.seconds("1960-01-01T00:00:00Z")), "before 1970 rounds down too")
    }

    @Test func aBareDayIsItsLastSecondThere() throws {
        #expect(try AsOf(parsing: "2026-03-31", timeZone: Self.seoul) == .endOfSecond(Self.seconds("2026-03-31T14:59:59Z")))
        // Santiago's clocks skip from 00:00 to 01:00 on 2026-09-06: the 5th ends at 23:59:59 -04:00.
        #expect(try AsOf(parsing: "2026-09-05", timeZone: Self.santiago) == .endOfSecond(Self.seconds("2026-09-06T03:59:59Z")))
        // New York's 2026-11-01 has 25 hours.
        #expect(try AsOf(parsing: "2026-11-01", timeZone: Self.newYork) == .endOfSecond(Self.seconds("2026-11-02T04:59:59Z")))
        #expect(try AsOf(parsing: "9999-12-30", timeZone: Self.seoul) == .endOfSecond(Self.seconds("9999-12-30T14:59:59Z")))
    }

    @Test func localTimesInTheClocksGapsAndRepeatsResolveOneWay() throws {
        // 01:30 happens twice in New York on 2026-11-01 (EDT, then EST): the first.
        #expect(try AsOf(parsing: "2026-11-01T01:30", timeZone: Self.newYork) == .endOfSecond(Self.seconds("2026-11-01T05:30:00Z")))
        // 02:30 never happens there on 2026-03-08: the instant after the gap is 03:00 EDT... or 02:30 read in EST.
        let gap = try AsOf(parsing: "2026-03-08T02:30", timeZone: Self.newYork)
        #expect(
            [
                AsOf.endOfSecond(Self.seconds("2026-03-08T07:00:00Z")), .endOfSecond(Self.seconds("2026-03-08T07:30:00Z")),
                .endOfSecond(Self.seconds("2026-03-08T06:30:00Z")),
            ].contains(gap), "\(gap)")
    }
}
