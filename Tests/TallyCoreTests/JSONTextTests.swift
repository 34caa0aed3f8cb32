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

    /// Integers (the extremes included), nesting, raw JSON and non-finite numbers serialise as
    /// JSON that reads back as the same values, in the order written.
    @Test func valuesSerialiseAsTheJSONTheyStandFor() throws {
        var rng = SplitMix64(seed: 9)
        var numbers: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, Int64.max, Int64.min, Int64.max - 1, Int64.min + 1]
        for _ in 0..<300 { numbers.append(Int64.random(in: Int64.min...Int64.max, using: &rng) >> Int64.random(in: 0...63, using: &rng)) }
        for number in numbers {
            #expect(JSONText.int(number).serialized == String(number))
        }
        let value = JSONText.object([("b", .array([.int(-5), .null, .bool(true), .bool(false)])), ("a", .string("x\"y")),
                                     ("raw", .raw(#"{"k":[1,2]}"#)), ("nan", .double(.nan)), ("half", .double(0.5)), ("empty", .array([])), ("o", .object([]))])
        #expect(value.serialized == #"{"b":[-5,null,true,false],"a":"x\"y","raw":{"k":[1,2]},"nan":null,"half":0.5,"empty":[],"o":{}}"#)
        #expect(value.utf8 == Array(value.serialized.utf8))
    }
}
