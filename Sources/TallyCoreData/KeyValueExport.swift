import Foundation
import TallyCore

/// An app's key-value settings exported as a property list (`NSUbiquitousKeyValueStore` or
/// `UserDefaults`' `dictionaryRepresentation()` written to a file): a dictionary whose values
/// become Tally setting values, as canonical JSON text (`JSONValue.canonicalText`).
///
/// Conversion: string → string; integer → integer; real → number (finite only); boolean →
/// boolean; date → ISO 8601 UTC string (`2024-05-01T09:30:00Z`); data → base64 string;
/// array → array; dictionary → object. Binary plists are read by `BinaryPropertyList`; XML
/// ones by Foundation (after a nesting check), then handed over in binary form, so both give
/// the same values.
public enum KeyValueExport {
    /// The settings in the property-list file `plistFile`, sorted by key. Refused, naming the
    /// key where there is one: a file over 16 MiB, a plist that is not a dictionary, a value
    /// that has no JSON form (an infinite real, a date outside years 1…9999, an archive UID).
    public static func readSettings(plistFile: String) throws -> [(key: String, value: String)] {
        try readSettings(plistFile: plistFile, limits: .standard)
    }

    static func readSettings(plistFile: String, limits: CoreDataLimits) throws -> [(key: String, value: String)] {
        let bytes = try BoundedFile.read(plistFile, limit: limits.maxSettingsBytes, what: "settings export")
        let plist: PropertyListValue
        do {
            plist = try parse(bytes)
        } catch let error as CoreDataStoreError {
            throw error
        } catch {
            throw CoreDataStoreError(.invalidSettings, "the settings export \(plistFile) is not a property list", cause: "\(error)")
        }
        guard case .dictionary(let entries) = plist else {
            throw CoreDataStoreError(.invalidSettings, "the settings export \(plistFile) is not a dictionary of settings")
        }
        var settings: [(key: String, value: String)] = []
        for key in entries.keys.sorted() {
            do {
                let value = try json(entries[key] ?? .null)
                settings.append((key: key, value: value.canonicalText))
            } catch {
                throw CoreDataStoreError(.invalidSettings, "the setting \(JSONText.quote(key)) in \(plistFile) has no JSON form: \(error)")
            }
        }
        return settings
    }

    /// Parses a binary or XML property list.
    static func parse(_ bytes: Data) throws -> PropertyListValue {
        if BinaryPropertyList.isBinaryPropertyList(bytes) { return try BinaryPropertyList.parse(bytes) }
        // Foundation's XML parser recurses once per level: refuse deep nesting before it runs.
        guard xmlNestingDepth(bytes) <= BinaryPropertyList.maxDepth else {
            throw PropertyListError("nested deeper than \(BinaryPropertyList.maxDepth)")
        }
        let object = try PropertyListSerialization.propertyList(from: bytes, options: [], format: nil)
        let binary = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
        return try BinaryPropertyList.parse(binary)
    }

    /// How deep `<array>` and `<dict>` elements nest in an XML plist (text cannot hold a raw
    /// `<`, so counting tags is exact enough for a bound).
    static func xmlNestingDepth(_ bytes: Data) -> Int {
        let opens = [Array("<array>".utf8), Array("<dict>".utf8)]
        let closes = [Array("</array>".utf8), Array("</dict>".utf8)]
        let text = Array(bytes)
        var depth = 0
        var deepest = 0
        var index = 0
        while index < text.count {
            if text[index] == UInt8(ascii: "<") {
                if opens.contains(where: { text[index...].starts(with: $0) }) {
                    depth += 1
                    deepest = max(deepest, depth)
                } else if closes.contains(where: { text[index...].starts(with: $0) }) {
                    depth -= 1
                }
            }
            index += 1
        }
        return deepest
    }

    /// The JSON form of a plist value.
    static func json(_ value: PropertyListValue) throws -> JSONValue {
        switch value {
        case .string(let text): return .string(text)
        case .integer(let number): return .integer(number)
        case .real(let number):
            guard number.isFinite else { throw PropertyListError("the real \(number) is not finite") }
            return .number(number.description)
        case .bool(let flag): return .bool(flag)
        case .date(let seconds):
            let millis = (seconds + Date.timeIntervalBetween1970AndReferenceDate) * 1000
            guard millis.isFinite, let exact = Int64(exactly: millis.rounded()), DateTime.supportedMillis.contains(exact) else {
                throw PropertyListError("the date \(seconds) s from 2001 is outside years 1 to 9999")
            }
            return .string(DateTime(epochMillis: exact, offsetMinutes: 0).description)
        case .data(let bytes): return .string(bytes.base64EncodedString())
        case .array(let items):
            var converted: [JSONValue] = []
            for item in items {
                let value = try json(item)
                converted.append(value)
            }
            return .array(converted)
        case .dictionary(let entries):
            var fields: [(String, JSONValue)] = []
            for key in entries.keys.sorted() {
                let value = try json(entries[key] ?? .null)
                fields.append((key, value))
            }
            return .object(fields)
        case .uid: throw PropertyListError("a keyed-archive UID")
        case .null: return .null
        }
    }
}
