import Testing
import TallyCore

/// `ControlCharacters` reads UTF-8 bytes; it must agree with Unicode's own answer for every scalar.
@Suite struct ControlCharactersTests {
    func isControl(_ scalar: Unicode.Scalar, allowingTabAndNewline: Bool) -> Bool {
        scalar.properties.generalCategory == .control && !(allowingTabAndNewline && (scalar == "\t" || scalar == "\n"))
    }

    @Test func everyScalarIsToldAsUnicodeTellsIt() {
        var disagreements: [UInt32] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }  // surrogates
            for allowing in [false, true] {
                // Alone, and between text that ends and begins with bytes a scan could misread.
                for text in [String(scalar), "가\u{C2}" + String(scalar) + "é"] {
                    let expected = text.unicodeScalars.contains { isControl($0, allowingTabAndNewline: allowing) }
                    if ControlCharacters.occur(in: text, allowingTabAndNewline: allowing) != expected { disagreements.append(value) }
                }
            }
            if disagreements.count > 10 { break }
        }
        #expect(disagreements.isEmpty, "disagrees at \(disagreements.map { String($0, radix: 16) })")
    }
}

@Suite struct WhitespaceTests {
    @Test func everyScalarIsToldAsUnicodeTellsIt() {
        let disagreements = (UInt32(0)...0x10FFFF).compactMap(Unicode.Scalar.init).filter { Whitespace.contains($0) != $0.properties.isWhitespace }
        #expect(disagreements.isEmpty, "disagrees at \(disagreements.prefix(10).map { String($0.value, radix: 16) })")
    }
}
