import Foundation

/// A point in time together with the UTC offset it was written in ("date-time with offset").
///
/// Kept as milliseconds since 1970 (UTC) plus the offset in minutes, so "2026-03-01T09:00+09:00"
/// prints back exactly as entered while ordering and month arithmetic stay simple.
public struct DateTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var epochMillis: Int64
    /// The writer's UTC offset in minutes (−18h … +18h).
    public var offsetMinutes: Int16

    /// Creates a value; the offset must lie within ±18 hours.
    public init(epochMillis: Int64, offsetMinutes: Int16) {
        self.epochMillis = epochMillis
        self.offsetMinutes = offsetMinutes
    }

    public static func < (lhs: DateTime, rhs: DateTime) -> Bool { lhs.epochMillis < rhs.epochMillis }

    /// The instants a value may hold: 0001-01-01T00:00Z … 9999-12-31T23:59:59.999Z. Far outside
    /// it, local-time arithmetic could overflow, so every write and every incoming event is held
    /// to it (`FieldKind.dateTime`).
    public static let supportedMillis: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999

    /// The largest UTC offset, ±18 hours (what ISO 8601 and the log's codec allow).
    public static let maxOffsetMinutes = 18 * 60

    /// Why a date-time field cannot hold this value (nil: it can) — the one rule of every write,
    /// every peer's value (`FieldKind.dateTime`) and every date read from a statement: an
    /// instant within `supportedMillis`, an offset within ±18:00, and a local time within the
    /// years 1 to 9999 too (9999-12-31T23:59Z at +18:00 is year 10000 where it was written, a
    /// month no query can name).
    public var outOfRange: String? {
        guard Self.supportedMillis.contains(epochMillis) else { return "must lie between the years 1 and 9999 (UTC)" }
        guard abs(Int(offsetMinutes)) <= Self.maxOffsetMinutes else { return "the UTC offset must lie within ±18:00" }
        guard Self.supportedMillis.contains(epochMillis + Int64(offsetMinutes) * 60_000) else {
            return "must lie between the years 1 and 9999 where it was written"
        }
        return nil
    }

    /// The local calendar fields in the writer's offset.
    public var localFields: (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, millis: Int) {
        let local = epochMillis + Int64(offsetMinutes) * 60_000
        let days = Int(local.floorDiv(86_400_000))
        let msOfDay = Int(local - Int64(days) * 86_400_000)
        let (y, m, d) = Self.civil(fromDays: days)
        return (y, m, d, msOfDay / 3_600_000, msOfDay / 60_000 % 60, msOfDay / 1000 % 60, msOfDay % 1000)
    }

    /// `YYYY-MM` in the writer's offset: the month a household ledger files the line under.
    public var localMonth: String {
        let f = localFields
        return ASCIIText.make(capacity: 16) { text in
            text.append(f.year, digits: 4)
            text.append("-")
            text.append(f.month, digits: 2)
        }
    }

    /// ISO 8601 with offset, e.g. `2026-03-01T09:30:00+09:00` (milliseconds only when non-zero).
    /// Formatted by hand into the string's own buffer: projections format every expense's date,
    /// and `String(format:)`, then string appends, were the hottest things in their profile.
    public var description: String { ASCIIText.make(capacity: Self.maxDescriptionLength, writeDescription) }

    /// Appends `description`'s UTF-8 to `out` without making a string (the change feed writes
    /// a million of them).
    public func appendDescription(to out: inout [UInt8]) {
        ASCIIText.append(capacity: Self.maxDescriptionLength, to: &out, writeDescription)
    }

    private static let maxDescriptionLength = 48

    private func writeDescription(_ text: inout ASCIIText) {
        let f = localFields
        text.append(f.year, digits: 4)
        text.append("-")
        text.append(f.month, digits: 2)
        text.append("-")
        text.append(f.day, digits: 2)
        text.append("T")
        text.append(f.hour, digits: 2)
        text.append(":")
        text.append(f.minute, digits: 2)
        text.append(":")
        text.append(f.second, digits: 2)
        if f.millis != 0 {
            text.append(".")
            text.append(f.millis, digits: 3)
        }
        if offsetMinutes == 0 {
            text.append("Z")
        } else {
            let magnitude = abs(Int(offsetMinutes))
            text.append(offsetMinutes < 0 ? "-" : "+")
            text.append(magnitude / 60, digits: 2)
            text.append(":")
            text.append(magnitude % 60, digits: 2)
        }
    }

    /// ASCII written straight into a new string's buffer.
    struct ASCIIText {
        private let buffer: UnsafeMutableBufferPointer<UInt8>
        private(set) var count = 0

        /// A string of at most `capacity` bytes, written by `write`.
        static func make(capacity: Int, _ write: (inout ASCIIText) -> Void) -> String {
            String(unsafeUninitializedCapacity: capacity) { buffer in
                var text = ASCIIText(buffer: buffer)
                write(&text)
                return text.count
            }
        }

        /// Writes at most `capacity` bytes with `write` and appends them to `out`.
        static func append(capacity: Int, to out: inout [UInt8], _ write: (inout ASCIIText) -> Void) {
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
                var text = ASCIIText(buffer: buffer)
                write(&text)
                out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<text.count]))
            }
        }

        private init(buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

        mutating func append(_ character: Unicode.Scalar) {
            buffer[count] = UInt8(ascii: character)
            count += 1
        }

        /// `value` zero-padded to `digits` (a sign first if negative).
        mutating func append(_ value: Int, digits: Int) {
            if value < 0 { append("-") }
            var rest = value.magnitude
            var width = 1
            var probe = rest
            while probe >= 10 { probe /= 10; width += 1 }
            let end = count + max(width, digits)
            for position in stride(from: end - 1, through: count, by: -1) {
                buffer[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
            count = end
        }
    }

    /// Parses ISO 8601: `YYYY-MM-DDTHH:MM[:SS[.fff]](Z|±HH:MM)`, or a bare `YYYY-MM-DD`,
    /// A `Date` as the log stores it: whole milliseconds, and `timeZone`'s offset at that
    /// moment; nil for a date that is no real moment (not finite, or beyond an Int64 of
    /// milliseconds) or a zone whose offset is no whole number of minutes that fits.
    public init?(date: Date, timeZone: TimeZone) {
        let millis = (date.timeIntervalSince1970 * 1000).rounded()
        guard millis.isFinite, let epochMillis = Int64(exactly: millis), let offset = Int16(exactly: timeZone.secondsFromGMT(for: date) / 60) else {
            return nil
        }
        self.init(epochMillis: epochMillis, offsetMinutes: offset)
    }

    /// which means local midnight of that day in `timeZone`.
    public init?(iso8601 text: String, timeZone: TimeZone = .current) {
        let bytes = Array(text.utf8)
        var scanner = DigitScanner(bytes: bytes)
        guard let year = scanner.number(digits: 4), scanner.expect("-"),
            let month = scanner.number(digits: 2), scanner.expect("-"),
            let day = scanner.number(digits: 2),
            (1...12).contains(month), (1...Self.daysIn(month: month, year: year)).contains(day)
        else { return nil }
        let days = Self.days(fromCivil: year, month, day)
        if scanner.atEnd {
            let utcMidnight = Date(timeIntervalSince1970: TimeInterval(days) * 86_400)
            // The offset in force at local midnight; one correction pass handles DST edges.
            var offset = timeZone.secondsFromGMT(for: utcMidnight)
            offset = timeZone.secondsFromGMT(for: utcMidnight.addingTimeInterval(TimeInterval(-offset)))
            self.init(epochMillis: Int64(days) * 86_400_000 - Int64(offset) * 1000, offsetMinutes: Int16(offset / 60))
            return
        }
        guard scanner.expect("T") || scanner.expect(" "),
            let hour = scanner.number(digits: 2), scanner.expect(":"),
            let minute = scanner.number(digits: 2), hour < 24, minute < 60
        else { return nil }
        var second = 0, millis = 0
        if scanner.expect(":") {
            guard let s = scanner.number(digits: 2), s < 60 else { return nil }
            second = s
            if scanner.expect(".") {
                guard let fraction = scanner.fraction() else { return nil }
                millis = fraction
            }
        }
        var offsetMinutes = 0
        if scanner.expect("Z") || scanner.expect("z") {
            offsetMinutes = 0
        } else {
            let negative: Bool
            if scanner.expect("+") { negative = false } else if scanner.expect("-") { negative = true } else { return nil }
            guard let oh = scanner.number(digits: 2) else { return nil }
            _ = scanner.expect(":")
            guard let om = scanner.number(digits: 2), om < 60, oh * 60 + om <= Self.maxOffsetMinutes else { return nil }
            offsetMinutes = (oh * 60 + om) * (negative ? -1 : 1)
        }
        guard scanner.atEnd else { return nil }
        let localMillis = Int64(days) * 86_400_000 + Int64(hour * 3_600_000 + minute * 60_000 + second * 1000 + millis)
        self.init(epochMillis: localMillis - Int64(offsetMinutes) * 60_000, offsetMinutes: Int16(offsetMinutes))
    }

    // Howard Hinnant's civil-from-days and days-from-civil.
    static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

private struct DigitScanner {
    let bytes: [UInt8]
    var index = 0

    var atEnd: Bool { index == bytes.count }

    mutating func expect(_ character: Character) -> Bool {
        guard index < bytes.count, bytes[index] == character.asciiValue else { return false }
        index += 1
        return true
    }

    mutating func number(digits: Int) -> Int? {
        guard index + digits <= bytes.count else { return nil }
        var value = 0
        for byte in bytes[index..<index + digits] {
            guard byte >= 48, byte <= 57 else { return nil }
            value = value * 10 + Int(byte - 48)
        }
        index += digits
        return value
    }

    /// Up to 9 fraction digits, returned as milliseconds (truncated).
    mutating func fraction() -> Int? {
        var digits: [Int] = []
        while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57, digits.count < 9 {
            digits.append(Int(bytes[index] - 48))
            index += 1
        }
        guard !digits.isEmpty else { return nil }
        let padded = (digits + [0, 0, 0]).prefix(3)
        return padded.reduce(0) { $0 * 10 + $1 }
    }
}

extension Int64 {
    func floorDiv(_ divisor: Int64) -> Int64 {
        let q = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? q - 1 : q
    }
}
