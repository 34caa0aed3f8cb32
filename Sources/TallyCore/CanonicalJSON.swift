import Foundation

/// Settings values are stored as canonical JSON text (sorted keys, no whitespace), so the same
/// value written on two replicas is byte-for-byte the same and compares equal.
public enum CanonicalJSON {
    /// Parses any JSON value (including scalars) and re-serialises it canonically.
    public static func normalize(_ text: String, field: String) throws(ValidationError) -> String {
        guard let data = text.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
              let canonical = try? JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes])
        else { throw ValidationError(field: field, "must be valid JSON (quote strings: '\"dark\"')") }
        return String(decoding: canonical, as: UTF8.self)
    }
}
