import Foundation

/// A property-list value as `BinaryPropertyList` reads it: the plain plist types, plus the
/// `UID` references keyed archives (NSKeyedArchiver) are made of.
indirect enum PropertyListValue: Sendable, Equatable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    /// Seconds since 2001-01-01T00:00:00Z, as plists store dates.
    case date(Double)
    case data(Data)
    case array([PropertyListValue])
    /// Keys are strings: a binary plist with another kind of key is refused when read.
    case dictionary([String: PropertyListValue])
    /// An NSKeyedArchiver object reference: an index into the archive's `$objects`.
    case uid(UInt64)
    /// The `null` marker (never written by Apple's encoders, accepted when read).
    case null

    /// The string, if this is one.
    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The entry under `key`, if this is a dictionary that has one.
    subscript(key: String) -> PropertyListValue? {
        if case .dictionary(let entries) = self { return entries[key] }
        return nil
    }
}
