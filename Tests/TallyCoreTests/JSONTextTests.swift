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
        let value = JSONText.object([
            ("b", .array([.int(-5), .null, .bool(true), .bool(false)])), ("a", .string("x\"y")),
            ("raw", .raw(#"{"k":[1,2]}"#)), ("nan", .double(.nan)), ("half", .double(0.5)), ("empty", .array([])), ("o", .object([])),
        ])
        #expect(value.serialized == #"{"b":[-5,null,true,false],"a":"x\"y","raw":{"k":[1,2]},"nan":null,"half":0.5,"empty":[],"o":{}}"#)
        #expect(value.utf8 == Array(value.serialized.utf8))
    }
}

@Suite struct EventJSONTests {
    /// The change feed's direct writer gives the very bytes of the `JSONText` tree, for random
    /// events with every value type, text needing escapes, setting keys, extreme clocks and
    /// sequence numbers, and dates across the whole calendar and every offset.
    @Test func directBytesEqualTheTree() {
        var rng = SplitMix64(seed: 20)
        for _ in 0..<2_000 {
            let event = RandomEvents.event(&rng)
            let index = UInt64.random(in: 0...UInt64.max, using: &rng) >> UInt64.random(in: 0...63, using: &rng)
            var hashBytes = [UInt8](repeating: 0, count: 32)
            for position in hashBytes.indices { hashBytes[position] = UInt8.random(in: 0...255, using: &rng) }
            let hash = EventHash(bytes: hashBytes)
            var direct: [UInt8] = []
            event.appendJSON(index: index, hash: hash, to: &direct)
            let tree = event.json(index: index, hash: hash).utf8
            #expect(direct == tree, "\(String(decoding: tree, as: UTF8.self))")
        }
    }

    /// Unsigned decimals over the whole range, as Swift prints them.
    @Test func unsignedDecimals() {
        var rng = SplitMix64(seed: 21)
        var numbers: [UInt64] = [0, 9, 10, UInt64.max, UInt64(Int64.max), UInt64(Int64.max) + 1]
        for _ in 0..<300 { numbers.append(UInt64.random(in: 0...UInt64.max, using: &rng) >> UInt64.random(in: 0...63, using: &rng)) }
        for number in numbers {
            var out: [UInt8] = []
            JSONText.appendDecimal(number, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == String(number))
        }
    }
}
