import Foundation
import GRDB
import TallyCore

/// One mapped column's value in one row, fetched behind a size guard: a value longer than its
/// bound is not fetched at all (`CASE WHEN length(c) > bound THEN NULL ELSE c END`), and
/// `oversize` says how long it was.
struct StoredValue {
    /// The value; NULL also when it was over its bound.
    let value: DatabaseValue
    /// The value's `length()` (bytes of a blob, characters of text) when it was over its bound.
    let oversize: Int64?

    /// A value that was fetched whole.
    init(_ value: DatabaseValue, oversize: Int64? = nil) {
        self.value = value
        self.oversize = oversize
    }

    /// The value as Core Data's String attributes store it (TEXT); nil for NULL.
    func text() throws -> String? {
        try checkSize()
        switch value.storage {
        case .null: return nil
        case .string(let text): return text
        default: throw FieldProblem("is \(describe()), not text")
        }
    }

    /// A Date attribute: seconds since 2001-01-01T00:00:00Z (REAL, or INTEGER when whole, as the
    /// TIMESTAMP column's numeric affinity keeps it), within years 1…9999 (`DateTime.supportedMillis`).
    func date() throws -> Date? {
        try checkSize()
        let seconds: Double
        switch value.storage {
        case .null: return nil
        case .double(let real): seconds = real
        case .int64(let integer): seconds = Double(integer)
        default: throw FieldProblem("is \(describe()), not a date (seconds since 2001-01-01)")
        }
        guard seconds.isFinite else { throw FieldProblem("is \(describe()), not a date") }
        let unixMillis = (seconds + Date.timeIntervalBetween1970AndReferenceDate) * 1000
        guard unixMillis >= Double(DateTime.supportedMillis.lowerBound), unixMillis <= Double(DateTime.supportedMillis.upperBound) else {
            throw FieldProblem("is \(describe()) seconds from 2001-01-01, outside years 1 to 9999")
        }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    /// A Boolean attribute: INTEGER 0 or 1.
    func bool() throws -> Bool? {
        try checkSize()
        switch value.storage {
        case .null: return nil
        case .int64(0): return false
        case .int64(1): return true
        case .double(let real) where real == 0 || real == 1: return real == 1
        default: throw FieldProblem("is \(describe()), not 0 or 1")
        }
    }

    /// A Double or Float attribute (REAL), or an integer one; finite.
    func real() throws -> Double? {
        try checkSize()
        switch value.storage {
        case .null: return nil
        case .double(let real) where real.isFinite: return real
        case .int64(let integer): return Double(integer)
        default: throw FieldProblem("is \(describe()), not a finite number")
        }
    }

    /// An amount as decimal text, as stored: an INTEGER as its digits, a REAL as its shortest
    /// round-trip digits (`DecimalText.plain`), TEXT (a Decimal that SQLite kept as text) as
    /// written when it is a plain decimal literal. Magnitudes of `limit` and more are refused.
    func amount(limit: Double) throws -> String? {
        try checkSize()
        let text: String
        let magnitude: Double
        switch value.storage {
        case .null: return nil
        case .int64(let integer):
            text = String(integer)
            magnitude = Double(integer).magnitude
        case .double(let real):
            guard let plain = DecimalText.plain(real) else { throw FieldProblem("is \(describe()), not a finite amount") }
            text = plain
            magnitude = real.magnitude
        case .string(let written):
            let trimmed = written.trimmingCharacters(in: .whitespaces)
            guard DecimalText.isPlainDecimal(trimmed), let real = Double(trimmed) else {
                throw FieldProblem("is \(describe()), not an amount")
            }
            text = trimmed
            magnitude = real.magnitude
        case .blob: throw FieldProblem("is \(describe()), not an amount")
        }
        guard magnitude < limit else { throw FieldProblem("is \(text), past the largest amount read (\(DecimalText.plain(limit) ?? "?"))") }
        return text
    }

    /// A UUID attribute: a 16-byte BLOB in RFC 4122 byte order, or (an app that kept it in a
    /// String attribute) its text form.
    func uuid() throws -> UUID? {
        try checkSize()
        switch value.storage {
        case .null: return nil
        case .blob(let data) where data.count == 16:
            let b = Array(data)
            return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
        case .string(let text):
            guard let uuid = UUID(uuidString: text) else { throw FieldProblem("is \(describe()), not a UUID") }
            return uuid
        default: throw FieldProblem("is \(describe()), not a UUID")
        }
    }

    /// A Binary Data or Transformable attribute (BLOB).
    func blob() throws -> Data? {
        try checkSize()
        switch value.storage {
        case .null: return nil
        case .blob(let data): return data
        default: throw FieldProblem("is \(describe()), not binary data")
        }
    }

    /// Throws when the value was over its bound (and so was not fetched).
    func checkSize() throws {
        if let oversize { throw FieldProblem("has \(oversize) bytes or characters, over the limit read") }
    }

    /// The value as a problem message shows it: its kind and, for text and numbers, its start.
    func describe() -> String {
        switch value.storage {
        case .null: return "NULL"
        case .int64(let integer): return "the integer \(integer)"
        case .double(let real): return "the real \(real)"
        case .string(let text):
            let head = text.count > 40 ? String(text.prefix(40)) + "…" : text
            return "the text \(JSONText.quote(head))"
        case .blob(let data): return "a blob of \(data.count) bytes"
        }
    }
}

/// Why one field of one row could not be read: the message completes "<field> …".
struct FieldProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
