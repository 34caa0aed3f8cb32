/// Unicode's control characters (general category Cc: U+0000–U+001F and U+007F–U+009F), told
/// from a text's UTF-8 bytes — a statement's every cell is checked for them, and asking each
/// scalar for its properties was a tenth of what reading one cost.
public enum ControlCharacters {
    /// Whether `text` holds one (a tab and a line feed excepted when `allowingTabAndNewline`).
    public static func occur(in text: String, allowingTabAndNewline: Bool = false) -> Bool {
        var afterC2 = false  // U+0080–U+009F are 0xC2 followed by 0x80–0x9F
        for byte in text.utf8 {
            if afterC2, (0x80...0x9F).contains(byte) { return true }
            afterC2 = byte == 0xC2
            if byte == 0x7F { return true }
            if byte < 0x20, !(allowingTabAndNewline && (byte == 0x09 || byte == 0x0A)) { return true }
        }
        return false
    }

    /// Whether `scalar` is one.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool { scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) }
}
