import Foundation
import TallyCore

/// The strings in a Transformable attribute's value, for the common case of an array of
/// strings (tags). Core Data stores a Transformable as the BLOB its value transformer makes;
/// `NSSecureUnarchiveFromData` (the default since iOS 12) and the older `NSKeyedUnarchiveFromData`
/// make an NSKeyedArchiver archive: a binary plist
/// `{$archiver: "NSKeyedArchiver", $version: 100000, $top: {root: UID}, $objects: […]}` where
/// `$objects[0]` is `"$null"`, an array is `{NS.objects: [UID…], $class: UID}` and a string is
/// stored as itself (or, for a mutable string, as `{NS.string: "…"}`). Apps with their own
/// transformer sometimes store a plain plist array or a JSON array; both are read too.
enum ArchivedStrings {
    /// The strings of a Transformable value (after any external-storage marker is removed).
    static func strings(from bytes: Data) throws -> [String] {
        if BinaryPropertyList.isBinaryPropertyList(bytes) {
            return try strings(from: BinaryPropertyList.parse(bytes))
        }
        if bytes.first == UInt8(ascii: "[") {
            guard case .array(let items)? = try? StrictJSON.parse(Array(bytes)) else {
                throw PropertyListError("starts like a JSON array but is not valid JSON")
            }
            return try items.map { item in
                guard case .string(let text) = item else { throw PropertyListError("a JSON array with a non-string item") }
                return text
            }
        }
        throw PropertyListError("neither a keyed archive nor a JSON array of strings")
    }

    /// The strings of a parsed plist: a keyed archive of an array (or set) of strings or of one
    /// string, or a plain plist array of strings.
    static func strings(from plist: PropertyListValue) throws -> [String] {
        guard plist["$archiver"]?.string != nil else {
            // A plain plist: an array of strings, or one string.
            switch plist {
            case .string(let text): return [text]
            case .array(let items):
                return try items.map { item in
                    guard let text = item.string else { throw PropertyListError("a plist array with a non-string item") }
                    return text
                }
            default: throw PropertyListError("a plist that is not an array of strings")
            }
        }
        guard case .array(let objects)? = plist["$objects"], case .uid(let rootID)? = plist["$top"]?["root"] else {
            throw PropertyListError("a keyed archive without $objects or $top.root")
        }
        func resolve(_ id: UInt64) throws -> PropertyListValue? {
            guard id != 0 else { return nil }  // $objects[0] is "$null"
            guard let index = Int(exactly: id), index < objects.count else {
                throw PropertyListError("a keyed archive reference \(id) out of range")
            }
            return objects[index]
        }
        func text(_ value: PropertyListValue) -> String? {
            if let text = value.string { return text }
            return value["NS.string"]?.string  // NSMutableString
        }
        guard let root = try resolve(rootID) else { return [] }
        if let single = text(root) { return [single] }
        guard case .array(let references)? = root["NS.objects"] else {
            throw PropertyListError("a keyed archive whose root is not an array or set of strings")
        }
        var strings: [String] = []
        for reference in references {
            guard case .uid(let id) = reference else { throw PropertyListError("a keyed archive array item that is not a reference") }
            guard let item = try resolve(id) else { continue }
            guard let itemText = text(item) else { throw PropertyListError("a keyed archive array item that is not a string") }
            strings.append(itemText)
        }
        return strings
    }
}
