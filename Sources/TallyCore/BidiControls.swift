/// Unicode's explicit directional formatting characters (UAX #9 §2.1–2.4): the embeddings and
/// overrides LRE, RLE, LRO, RLO (U+202A, 202B, 202D, 202E), closed by PDF (U+202C), and the
/// isolates LRI, RLI, FSI (U+2066–2068), closed by PDI (U+2069).
///
/// Paired, they are how right-to-left text is written. Unpaired, they reorder whatever is shown
/// after them: a payee `\u{202E}evil\u{202D}RTL` reads "RTLlive", and an override left open in a
/// payment method runs on over the separators into the tags beside it. So text fields refuse
/// an unpaired one (`FieldKind.text`, since event schema version 5), and text that older
/// events hold is neutralised where it leaves the ledger as a file (`neutralized`).
public enum BidiControls {
    enum Kind { case embedding, isolate }

    static func opener(_ scalar: Unicode.Scalar) -> Kind? {
        switch scalar.value {
        case 0x202A, 0x202B, 0x202D, 0x202E: .embedding
        case 0x2066, 0x2067, 0x2068: .isolate
        default: nil
        }
    }

    static func closer(_ scalar: Unicode.Scalar) -> Kind? {
        switch scalar.value {
        case 0x202C: .embedding
        case 0x2069: .isolate
        default: nil
        }
    }

    /// A paragraph ends at these; every control must be closed before it (UAX #9 BD8).
    static func endsParagraph(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x0D, 0x1C...0x1E, 0x85, 0x2029: true
        default: false
        }
    }

    /// Whether `utf8` may hold one (U+202A–202E are E2 80 AA–AE, U+2066–2069 are E2 81 A6–A9):
    /// text without the byte E2 followed by 80 or 81 has none, decided without decoding.
    static func mayContain(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard utf8.count >= 3 else { return false }
        for index in 0..<(utf8.count - 2) where utf8[index] == 0xE2 && (utf8[index + 1] == 0x80 || utf8[index + 1] == 0x81) {
            let last = utf8[index + 2]
            if utf8[index + 1] == 0x80 ? (0xAA...0xAE).contains(last) : (0xA6...0xA9).contains(last) { return true }
        }
        return false
    }

    /// The positions (in `text.unicodeScalars`) of controls without a partner: a closer with no
    /// opener of its kind innermost, or an opener still open at its paragraph's end.
    static func unpaired(in text: String) -> [String.UnicodeScalarView.Index] {
        var open: [(Kind, String.UnicodeScalarView.Index)] = []
        var lonely: [String.UnicodeScalarView.Index] = []
        let scalars = text.unicodeScalars
        for index in scalars.indices {
            let scalar = scalars[index]
            if let kind = opener(scalar) {
                open.append((kind, index))
            } else if let kind = closer(scalar) {
                if open.last?.0 == kind { open.removeLast() } else { lonely.append(index) }
            } else if endsParagraph(scalar) {
                lonely += open.map(\.1)
                open.removeAll()
            }
        }
        return (lonely + open.map(\.1)).sorted()
    }

    /// Whether every control in `text` is closed by its own kind, innermost first, within its
    /// paragraph.
    public static func arePaired(_ text: String) -> Bool {
        var copy = text
        guard copy.withUTF8({ mayContain($0) }) else { return true }
        return unpaired(in: text).isEmpty
    }

    /// `text` without its unpaired controls (paired ones stay: they are how the text is meant
    /// to read).
    public static func neutralized(_ text: String) -> String {
        var copy = text
        guard copy.withUTF8({ mayContain($0) }) else { return text }
        let lonely = Set(unpaired(in: text))
        guard !lonely.isEmpty else { return text }
        var result = String.UnicodeScalarView()
        for index in text.unicodeScalars.indices where !lonely.contains(index) { result.append(text.unicodeScalars[index]) }
        return String(result)
    }
}
