import Foundation

/// Settings values are stored as canonical JSON text (sorted keys, no whitespace), so the same
/// value written on two replicas is byte-for-byte the same and compares equal.
public enum CanonicalJSON {
    /// Parses any JSON value (including scalars) strictly and writes it canonically
    /// (`JSONValue.canonicalText`). Written here rather than by Foundation's serializer, whose
    /// key order and number forms vary by platform and which is not a fixed point (`-0.0`
    /// became `-0`, then `0`): a normal form must be one, or an honest replica's event would be
    /// refused by its peers.
    public static func normalize(_ text: String, field: String) throws(ValidationError) -> String {
        guard let value = try? StrictJSON.parse(Array(text.utf8)) else {
            throw ValidationError(field: field, "must be valid JSON (quote strings: '\"dark\"')")
        }
        return value.canonicalText
    }
}
