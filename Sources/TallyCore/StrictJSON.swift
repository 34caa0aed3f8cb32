import Foundation

/// A JSON value as parsed by `StrictJSON`: numbers keep whether they were written as integers.
public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// Any number with a fraction or exponent, or too large for Int64 (kept as text).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    /// Compact canonical text, for setting values: object keys sorted by their UTF-8 bytes
    /// (code-point order, the same on every platform), no whitespace, strings escaped by
    /// `JSONText.quote`, integers in decimal (so `-0` is `0`), other numbers as written. Parsing
    /// it again gives the same text (a fixed point), which replicas compare byte for byte.
    public var canonicalText: String {
        switch self {
        case .null: "null"
        case .bool(let flag): flag ? "true" : "false"
        case .integer(let number): String(number)
        case .number(let text): text
        case .string(let text): JSONText.quote(text)
        case .array(let items): "[" + items.map(\.canonicalText).joined(separator: ",") + "]"
        case .object(let fields):
            "{"
                + fields.sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }.map { JSONText.quote($0.0) + ":" + $0.1.canonicalText }.joined(
                    separator: ",") + "}"
        }
    }
}

/// A JSON parser for request bodies that refuses what Foundation quietly accepts: duplicate
/// keys, trailing garbage, nesting deeper than 64, invalid UTF-8 — and that tells integers
/// from `12.5` or `1e3`, so an amount can be checked for what was actually sent.
public enum StrictJSON {
    /// Parses `bytes` as one JSON value; throws a message saying what and where.
    public static func parse(_ bytes: [UInt8]) throws(StrictJSONError) -> JSONValue {
        var parser = Parser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    struct Parser {
        let bytes: [UInt8]
        var index = 0

        func error(_ message: String) -> StrictJSONError { StrictJSONError(message: "\(message) at byte \(index)") }

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func expect(_ literal: String) throws(StrictJSONError) {
            for byte in literal.utf8 {
                guard index < bytes.count, bytes[index] == byte else { throw error("expected '\(literal)'") }
                index += 1
            }
        }

        mutating func value(depth: Int) throws(StrictJSONError) -> JSONValue {
            guard depth < 64 else { throw error("nested deeper than 64 levels") }
            guard index < bytes.count else { throw error("unexpected end of input") }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var fields: [(String, JSONValue)] = []
                var seen: Set<String> = []
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(fields) }
                while true {
                    skipWhitespace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a quoted field name") }
                    let key = try string()
                    guard seen.insert(key).inserted else { throw error("duplicate field \"\(key)\"") }
                    skipWhitespace()
                    try expect(":")
                    skipWhitespace()
                    fields.append((key, try value(depth: depth + 1)))
                    skipWhitespace()
                    guard index < bytes.count else { throw error("unexpected end of input in an object") }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    try expect("}")
                    return .object(fields)
                }
            case UInt8(ascii: "["):
                index += 1
                var items: [JSONValue] = []
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                while true {
                    skipWhitespace()
                    items.append(try value(depth: depth + 1))
                    skipWhitespace()
                    guard index < bytes.count else { throw error("unexpected end of input in an array") }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    try expect("]")
                    return .array(items)
                }
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try expect("true"); return .bool(true)
            case UInt8(ascii: "f"): try expect("false"); return .bool(false)
            case UInt8(ascii: "n"): try expect("null"); return .null
            default: return try number()
            }
        }

        mutating func number() throws(StrictJSONError) -> JSONValue {
            let start = index
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            let digitsStart = index
            while index < bytes.count, (48...57).contains(bytes[index]) { index += 1 }
            guard index > digitsStart else { throw error("expected a value") }
            if bytes[digitsStart] == 48, index - digitsStart > 1 { throw error("leading zeros are not JSON") }
            var isInteger = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                isInteger = false
                index += 1
                let fraction = index
                while index < bytes.count, (48...57).contains(bytes[index]) { index += 1 }
                guard index > fraction else { throw error("expected digits after '.'") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                isInteger = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                let exponent = index
                while index < bytes.count, (48...57).contains(bytes[index]) { index += 1 }
                guard index > exponent else { throw error("expected digits in the exponent") }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if isInteger, let integer = Int64(text) { return .integer(integer) }
            return .number(text)
        }

        mutating func string() throws(StrictJSONError) -> String {
            index += 1  // opening quote
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flush() throws(StrictJSONError) {
                guard !raw.isEmpty else { return }
                guard let text = String(validating: raw, as: UTF8.self) else { throw error("invalid UTF-8 in a string") }
                scalars.append(contentsOf: text.unicodeScalars)
                raw.removeAll()
            }
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    try flush()
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    try flush()
                    guard index < bytes.count else { break }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""): scalars.append("\"")
                    case UInt8(ascii: "\\"): scalars.append("\\")
                    case UInt8(ascii: "/"): scalars.append("/")
                    case UInt8(ascii: "b"): scalars.append("\u{08}")
                    case UInt8(ascii: "f"): scalars.append("\u{0C}")
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "u"):
                        var code = try hex4()
                        if (0xD800...0xDBFF).contains(code) {
                            try expect("\\u")
                            let low = try hex4()
                            guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate") }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
                        scalars.append(scalar)
                    default: throw error("invalid escape")
                    }
                case 0..<0x20: throw error("control character in a string")
                default: raw.append(byte)
                }
            }
            throw error("unterminated string")
        }

        mutating func hex4() throws(StrictJSONError) -> UInt32 {
            // Four hex digits exactly: UInt32(_:radix:) alone would also take a sign ("\u+041").
            let isHex = { (byte: UInt8) in (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte) }
            guard index + 4 <= bytes.count, bytes[index..<index + 4].allSatisfy(isHex),
                let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
            else {
                throw error("expected four hex digits")
            }
            index += 4
            return code
        }
    }
}

/// Malformed JSON.
public struct StrictJSONError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

extension JSONText {
    /// The member `key` of this object (raw text is parsed first); nil if there is none or
    /// this is not an object.
    public func member(_ key: String) -> JSONText? {
        switch self {
        case .object(let fields): return fields.first { $0.0 == key }?.1
        case .raw(let text):
            guard case .object(let fields)? = try? StrictJSON.parse(Array(text.utf8)) else { return nil }
            return fields.first { $0.0 == key }.map { JSONText($0.1) }
        default: return nil
        }
    }

    /// A parsed value as output JSON, keys in their order, numbers as written.
    public init(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .integer(let number): self = .int(number)
        case .number(let text): self = .raw(text)
        case .string(let text): self = .string(text)
        case .array(let items): self = .array(items.map(JSONText.init))
        case .object(let fields): self = .object(fields.map { ($0.0, JSONText($0.1)) })
        }
    }
}
