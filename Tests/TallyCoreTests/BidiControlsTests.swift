import Foundation
import PropertyBased
import Testing
@testable import TallyCore
import TallyTestSupport

/// Issue 29: unpaired directional controls are refused in text from event schema version 5
/// on, kept in older events, and dropped where text is neutralised.
@Suite struct BidiControlsTests {
    let rlo = "\u{202E}", lro = "\u{202D}", pdf = "\u{202C}", rli = "\u{2067}", pdi = "\u{2069}"

    @Test func pairedControlsPassAndUnpairedOnesAreFound() {
        for paired in ["plain", "\(rlo)evil\(pdf)", "\(rli)שלום\(pdi) · tags", "\(rli)a\(rlo)b\(pdf)c\(pdi)", "a\n\(rlo)b\(pdf)"] {
            #expect(BidiControls.arePaired(paired), "\(paired.unicodeScalars.map { String($0.value, radix: 16) })")
            #expect(BidiControls.neutralized(paired) == paired)
        }
        let unpaired: [(String, String)] = [
            ("\(rlo)evil\(lro)RTL", "evilRTL"),  // issue 29's payee: reads "RTLlive" unisolated
            ("card\(rlo)", "card"),  // an override left open spills into what follows
            ("x\(pdf)y", "xy"),  // a closer with nothing to close
            ("\(rli)a\(pdf)b\(pdi)", "\(rli)ab\(pdi)"),  // a closer of the wrong kind innermost
            ("\(rlo)line one\nline two\(pdf)", "line one\nline two"),  // closed only in another line
        ]
        for (text, neutral) in unpaired {
            #expect(!BidiControls.arePaired(text))
            #expect(BidiControls.neutralized(text) == neutral)
            #expect(BidiControls.arePaired(BidiControls.neutralized(text)))
        }
    }

    /// The byte-level pre-check never misses a control (a property over random text).
    @Test func neutralizedTextIsAlwaysPairedAndKeepsEverythingElse() async {
        let alphabet: [Character] = [
            "a", "가", "\n", " ", "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}",
            "\u{200F}", "\u{2028}", "\u{2070}", "\u{2029}",
        ]
        await propertyCheck(count: 2_000, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = SplitMix64(seed: seed)
            let text = String((0..<Int.random(in: 0...10, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            let neutral = BidiControls.neutralized(text)
            #expect(BidiControls.arePaired(neutral))
            let isControl = { (scalar: Unicode.Scalar) in (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value) }
            #expect(neutral.unicodeScalars.filter { !isControl($0) }.map(\.value) == text.unicodeScalars.filter { !isControl($0) }.map(\.value))
            let hasControl = text.unicodeScalars.contains(where: isControl)
            #expect(hasControl || BidiControls.arePaired(text))
            if hasControl { #expect(!FieldKind.isNormalText(text, maxLength: 100, nonEmpty: false), "the fast path hands every control to the slow one") }
        }
    }

    /// Local writes refuse them in every text field; a peer's version-5 event is refused; a
    /// version-4 event (written before the rule) keeps what it holds.
    @Test func textFieldsRefuseThemFromSchemaVersion5() throws {
        let spoof = "\(rlo)evil\(lro)RTL"
        let fields: [(EntityType, PropertyName)] = [(.expense, .payee), (.expense, .payment), (.expense, .memo), (.category, .name), (.todo, .title)]
        for (type, name) in fields {
            #expect { try EntitySchema.validate(type, .update, [name: .string(spoof)]) } throws: { "\($0)".contains("U+202A") }
        }
        #expect { try EntitySchema.validate(.expense, .update, [.tags: .strings(["ok", "tag\(rlo)"])]) } throws: { "\($0)".contains("not closed") }
        #expect(try EntitySchema.validate(.expense, .update, [.payee: .string("\(rli)שלום\(pdi)")]) == [.payee: .string("\(rli)שלום\(pdi)")])

        let draft = EventDraft(entityType: .expense, entityID: .uuid(UUID()), operation: .update, properties: [.payment: .string("card\(rlo)")], actor: "peer")
        #expect(throws: ValidationError.self) { try EntitySchema.checkIncoming(IncomingRulesTests.event(draft)) }
        #expect(throws: Never.self) { try EntitySchema.checkIncoming(IncomingRulesTests.event(draft, version: 4)) }
        #expect(Event.currentSchemaVersion >= Event.bidiRuleSchemaVersion)
    }
}
