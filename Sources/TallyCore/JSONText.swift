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
    public var serialized: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let flag): out += flag ? "true" : "false"
        case .int(let number): out += String(number)
        case .double(let number): out += number.isFinite ? String(number) : "null"
        case .string(let text): Self.quote(text, into: &out)
        case .raw(let json): out += json
        case .array(let items):
            out += "["
            for (position, item) in items.enumerated() {
                if position > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let fields):
            out += "{"
            for (position, (key, value)) in fields.enumerated() {
                if position > 0 { out += "," }
                Self.quote(key, into: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    /// `text` as a JSON string literal.
    public static func quote(_ text: String) -> String {
        var out = ""
        quote(text, into: &out)
        return out
    }

    private static func quote(_ text: String, into out: inout String) {
        out += "\""
        // Most text needs no escape (bytes from 0x80 up are UTF-8 of non-ASCII, which JSON
        // takes as it is): then it goes in whole, not scalar by scalar.
        if !text.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 < 0x20 }) {
            out += text
            out += "\""
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
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
