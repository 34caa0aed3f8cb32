import Foundation

/// A JSON value written with fields in a chosen order — what the CLI prints and what people
/// diff. (Foundation's encoders either sort keys or scramble them.)
public indirect enum JSONText: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONText])
    case object([(String, JSONText)])
    /// Already-serialised JSON, embedded as is (a setting's canonical value).
    case raw(String)

    public static func == (lhs: JSONText, rhs: JSONText) -> Bool { lhs.serialized == rhs.serialized }

    /// Compact serialisation.
    public var serialized: String { String(decoding: utf8, as: UTF8.self) }

    /// Compact serialisation as UTF-8 bytes (what a response body takes).
    public var utf8: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out)
        return out
    }

    /// Appends the compact serialisation to `out`: bytes, not `String` appends (a page of
    /// expenses is thousands of small pieces).
    public func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: Self.nullBytes)
        case .bool(let flag): out.append(contentsOf: flag ? Self.trueBytes : Self.falseBytes)
        case .int(let number): Self.appendDecimal(number, to: &out)
        case .double(let number):
            if number.isFinite { out.append(contentsOf: String(number).utf8) } else { out.append(contentsOf: Self.nullBytes) }
        case .string(let text): Self.quote(text, into: &out)
        case .raw(let json): out.append(contentsOf: json.utf8)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            var first = true
            for item in items {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let fields):
            out.append(UInt8(ascii: "{"))
            var first = true
            for field in fields {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                Self.quote(field.0, into: &out)
                out.append(UInt8(ascii: ":"))
                field.1.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let nullBytes = Array("null".utf8), trueBytes = Array("true".utf8), falseBytes = Array("false".utf8)

    /// A decimal integer's digits, without going through a `String`.
    public static func appendDecimal(_ number: Int64, to out: inout [UInt8]) {
        if number < 0 { out.append(UInt8(ascii: "-")) }
        appendDecimal(number.magnitude, to: &out)  // Int64.min has no positive Int64
    }

    /// An unsigned integer's decimal digits.
    public static func appendDecimal(_ number: UInt64, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in  // 20 digits at most
            var magnitude = number
            var start = 20
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// `text` as a JSON string literal.
    public static func quote(_ text: String) -> String {
        var out: [UInt8] = []
        quote(text, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static func quote(_ text: String, into out: inout [UInt8]) {
        var text = text
        text.withUTF8 { appendQuoted($0, to: &out) }
    }

    /// UTF-8 `bytes` as a JSON string literal. Bytes from 0x80 up are UTF-8 of non-ASCII, which
    /// JSON takes as it is: only quotes, backslashes and control characters are escaped.
    public static func appendQuoted(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var start = 0, position = 0
        let count = bytes.count
        while position < count {
            let byte = bytes[position]
            if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                position += 1
                continue
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<position]))
            position += 1
            start = position
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            default:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            }
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<count]))
        out.append(UInt8(ascii: "\""))
    }
}

extension PropertyValue {
    /// The value as it appears in JSON output (DESIGN.md §2 shapes).
    public var json: JSONText {
        switch self {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .int(let number): .int(number)
        case .string(let text): .string(text)
        case .uuid(let uuid): .string(uuid.lowercased)
        case .dateTime(let date): .string(date.description)
        case .strings(let texts): .array(texts.map(JSONText.string))
        case .bools(let flags): .array(flags.map(JSONText.bool))
        case .json(let text): .raw(text)
        }
    }

    /// A short human rendering for tables and history lines.
    public var display: String {
        switch self {
        case .null: "∅"
        case .string(let text): text
        case .json(let text): text
        default: json.serialized
        }
    }
}
