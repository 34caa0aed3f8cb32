/// How many terminal cells text takes, for aligning columns of human output.
///
/// Follows Unicode East Asian Width (UAX #11, https://www.unicode.org/reports/tr11/) the way
/// `wcwidth` does: East Asian Wide (W) and Fullwidth (F) characters and emoji presentation
/// characters take two cells; combining marks, format characters (ZWJ, U+200B, …), variation
/// selectors, Hangul medial and final jamo and control characters take none; everything else
/// takes one. Ambiguous (A) characters (Greek, Cyrillic, box drawing, “smart quotes”, …) count
/// as one: UAX #11 leaves them to context, and terminals outside a legacy CJK locale draw them
/// narrow.
///
/// Width is counted per grapheme cluster (`Character`), as modern terminals draw them: an emoji
/// ZWJ sequence or a flag is one two-cell picture, and a base letter with combining marks one cell.
public enum DisplayWidth {
    public static func of(_ text: String) -> Int {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text.utf8.count }  // printable ASCII
        return text.reduce(0) { $0 + of($1) }
    }

    /// `text` padded with spaces to `width` cells (on the left when `rightAligned`); text
    /// already that wide or wider comes back unchanged.
    public static func padded(_ text: String, to width: Int, rightAligned: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - of(text)))
        return rightAligned ? padding + text : text + padding
    }

    static func of(_ character: Character) -> Int {
        // The widest scalar: a ZWJ sequence or flag is as wide as one emoji, "e\u{301}" as "e",
        // Hangul jamo L+V(+T) as the syllable it spells.
        let widest = character.unicodeScalars.map(of).max() ?? 0
        // The emoji presentation selector makes its base a two-cell emoji: "☺\u{FE0F}", "1\u{FE0F}\u{20E3}".
        return widest > 0 && character.unicodeScalars.contains("\u{FE0F}") ? 2 : widest
    }

    static func of(_ scalar: Unicode.Scalar) -> Int {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .control, .lineSeparator, .paragraphSeparator: return 0
        case .format where scalar != "\u{AD}": return 0  // ZWJ, U+200B, …; a soft hyphen shows as "-"
        default: break
        }
        if (0x1160...0x11FF).contains(scalar.value) || (0xD7B0...0xD7FF).contains(scalar.value) { return 0 }  // Hangul medial/final jamo
        if scalar.properties.isEmojiPresentation { return 2 }
        return wide.contains { $0.contains(scalar.value) } ? 2 : 1
    }

    /// East Asian Wide (W) and Fullwidth (F) blocks outside the emoji, from EastAsianWidth.txt.
    /// (Combining marks inside them, like U+3099, are caught by their category first.)
    private static let wide: [ClosedRange<UInt32>] = [
        0x1100...0x115F,  // Hangul Jamo, leading consonants
        0x2329...0x232A,  // angle brackets
        0x2E80...0x303E,  // CJK radicals, Kangxi radicals, ideographic description, CJK symbols and punctuation
        0x3041...0x3247,  // Hiragana, Katakana, Bopomofo, Hangul compatibility jamo, Kanbun, CJK strokes, enclosed CJK…
        0x3250...0x33FF,  // …but not the ambiguous circled numbers U+3248–324F; CJK compatibility
        0x3400...0x4DBF,  // CJK Extension A
        0x4E00...0x9FFF,  // CJK Unified Ideographs
        0xA000...0xA4CF,  // Yi
        0xA960...0xA97F,  // Hangul Jamo Extended-A (leading consonants)
        0xAC00...0xD7A3,  // Hangul Syllables
        0xF900...0xFAFF,  // CJK Compatibility Ideographs
        0xFE10...0xFE19,  // vertical forms
        0xFE30...0xFE6F,  // CJK compatibility forms, small form variants
        0xFF01...0xFF60,  // fullwidth ASCII and brackets
        0xFFE0...0xFFE6,  // fullwidth signs (¢ £ ¬ ￣ ¦ ¥ ₩)
        0x16FE0...0x18D7F,  // ideographic symbols, Tangut, Khitan, Tangut supplement
        0x1AFF0...0x1B2FF,  // kana extended and supplement, Nushu
        0x1F200...0x1F2FF,  // enclosed ideographic supplement
        0x20000...0x3FFFD,  // CJK Extensions B and later (planes 2 and 3)
    ]
}
