import Foundation
import Testing
import TallyCore
import TallyTestSupport

@Suite struct JSONTextTests {
    /// Any text, quoted, reads back as itself: text that needs no escape goes in whole, the rest
    /// scalar by scalar (quotes, backslashes, control characters); non-ASCII is kept as it is.
    @Test func quotedTextReadsBackAsItself() throws {
        var rng = SplitMix64(seed: 3)
        let pieces = ["a", "Z", "0", " ", "\"", "\\", "\n", "\r", "\t", "\u{01}", "\u{1F}", "é", "점심", "☕️", "/", "\u{7F}"]
        for length in 0..<400 {
            let text = (0..<(length % 12)).map { _ in pieces.randomElement(using: &rng)! }.joined()
            let quoted = JSONText.quote(text)
            let read = try JSONSerialization.jsonObject(with: Data(quoted.utf8), options: .fragmentsAllowed) as? String
            #expect(read == text, "\(quoted)")
        }
        #expect(JSONText.quote("lunch 점심") == "\"lunch 점심\"")
        #expect(JSONText.quote("a\"b\\c\n\u{01}") == #""a\"b\\c\n\u0001""#)
    }
}
