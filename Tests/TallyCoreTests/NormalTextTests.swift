import Foundation
import PropertyBased
import Testing
@testable import TallyCore
import TallyTestSupport

/// The one-pass check of text in normal form agrees with the slow, obvious one (Foundation's
/// trimming and Unicode's general categories) on any text.
@Suite struct NormalTextTests {
    static let alphabet: [Character] = [
        "a", "Z", " ", "\t", "\n", "\r", "\u{0B}", "\u{85}", "\u{A0}", "\u{3000}", "\u{2028}", "\u{200B}",
        "\u{1B}", "\u{7F}", "\u{9F}", "\u{80}", "가", "점", "🍚", "👨‍👩‍👧", "e\u{301}", "\u{FEFF}", "é", "-",
    ]

    static func slow(_ text: String, maxLength: Int, nonEmpty: Bool) -> Bool {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if nonEmpty, trimmed.isEmpty { return false }
        if text.unicodeScalars.count > maxLength { return false }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" && $0 != "\t" }) { return false }
        return trimmed == text
    }

    /// Every scalar Foundation trims is one `isTrimmed` names, and no other.
    @Test func trimmedScalarsAreExactlyFoundations() {
        for value in 0..<0x11_0000 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let trimmedByFoundation = String(Character(scalar)).trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
            #expect(FieldKind.isTrimmed(scalar) == trimmedByFoundation, "U+\(String(value, radix: 16))")
        }
    }

    @Test func theFastCheckAgreesWithTheSlowOne() async {
        await propertyCheck(count: 2_000, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = SplitMix64(seed: seed)
            let text = String((0..<Int.random(in: 0...8, using: &rng)).map { _ in Self.alphabet.randomElement(using: &rng)! })
            let maxLength = Int.random(in: 1...10, using: &rng)
            let nonEmpty = Bool.random(using: &rng)
            #expect(
                FieldKind.isNormalText(text, maxLength: maxLength, nonEmpty: nonEmpty) == Self.slow(text, maxLength: maxLength, nonEmpty: nonEmpty),
                "\(text.unicodeScalars.map { String($0.value, radix: 16) }) max \(maxLength) nonEmpty \(nonEmpty)")
            let control = text.unicodeScalars.contains { $0.properties.generalCategory == .control }
            #expect(FieldKind.containsControlCharacter(text) == control)
        }
    }
}
