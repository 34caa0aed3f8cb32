import Crypto
import Foundation
import PropertyBased
import Testing
@testable import TallyLog
import TallyCore
import TallyTestSupport

@Suite struct EventCodecTests {
    @Test func everyEventKindRoundTrips() throws {
        let log = TestLog()
        let writer = try log.openWriter()
        let written = try writer.append(SampleEvents.everyKind())
        #expect(Set(written.map { "\($0.entityType) \($0.operation)" }).count == 12)
        for event in written {
            let bytes = EventCodec.encode(event)
            #expect(try EventCodec.decode(bytes) == event)
            #expect(EventCodec.encode(try EventCodec.decode(bytes)) == bytes, "encoding is canonical")
        }
        let read = try log.events().map(\.event)
        #expect(read == written)
    }

    @Test func randomEventsRoundTrip() async {
        await propertyCheck(count: 500, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = SplitMix64(seed: seed)
            let event = RandomEvents.event(&rng)
            let bytes = EventCodec.encode(event)
            #expect((try? EventCodec.decode(bytes)) == event)
        }
    }

    @Test func everyTruncationOfAnEncodingIsRejected() throws {
        for draft in SampleEvents.everyKind() {
            let event = Event(
                origin: .random(), sequence: 1, timestamp: .zero, actor: draft.actor, isLocalOnly: draft.isLocalOnly,
                entityType: draft.entityType, entityID: draft.entityID, operation: draft.operation,
                properties: draft.properties, previousHash: .zero)
            let bytes = EventCodec.encode(event)
            for length in 0..<bytes.count {
                #expect(throws: (any Error).self) { try EventCodec.decode(Array(bytes[0..<length])) }
            }
            #expect(throws: (any Error).self) { try EventCodec.decode(bytes + [0]) }
        }
    }

    @Test func randomBytesNeverCrashTheDecoder() async {
        await propertyCheck(count: 2_000, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = SplitMix64(seed: seed)
            var bytes = EventCodec.encode(RandomEvents.event(&rng))
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            _ = try? EventCodec.decode(bytes)
        }
    }

    @Test func hashIsSHA256OfTheEncoding() {
        // SHA-256("abc"), from FIPS 180-2.
        #expect(EventCodec.hash(Array("abc".utf8)).description == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(EventCodec.hash([UInt8]()).description == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func hashAgreesWithSwiftCryptoOnRandomInputs() {
        // EventCodec.hash calls BoringSSL's one-shot SHA256 directly; it must equal swift-crypto's.
        var rng = SplitMix64(seed: 7)
        for length in [1, 55, 56, 63, 64, 65, 119, 120, 160, 1000, 70_000] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let expected = SHA256.hash(data: bytes).withUnsafeBytes { EventHash(bytes: $0) }
            #expect(EventCodec.hash(bytes) == expected, "length \(length)")
        }
    }

    @Test func varintsHaveOneEncodingEach() throws {
        // Found by FuzzEvents (Tests/FuzzCorpus/Events/crash-66062313…): an overlong varint
        // (a trailing zero group) decoded, so one event had two encodings.
        func read(_ bytes: [UInt8]) throws -> UInt64 {
            try bytes.withUnsafeBytes {
                var reader = ByteReader($0); return try reader.varint()
            }
        }
        #expect(try read([0x00]) == 0)
        #expect(try read([0xAC, 0x02]) == 300)
        #expect(throws: DecodingError.self) { try read([0x80, 0x00]) }
        #expect(throws: DecodingError.self) { try read([0xAC, 0x82, 0x00]) }
        // The one-byte fast path and the long path meet at 127/128; short input throws.
        #expect(try read([0x7F]) == 127)
        #expect(try read([0x80, 0x01]) == 128)
        #expect(throws: DecodingError.self) { try read([]) }
        #expect(throws: DecodingError.self) { try read([0x80]) }
        var rng = SplitMix64(seed: 11)
        for _ in 0..<2_000 {
            let value = UInt64.random(in: 0...UInt64.max, using: &rng) >> UInt64.random(in: 0...63, using: &rng)
            var writer = ByteWriter()
            writer.varint(value)
            #expect(try read(writer.bytes) == value)
        }
    }

    @Test func stringsAreValidUTF8OrRejected() throws {
        // A length prefix, then the bytes: ASCII takes a fast path, anything else the validator.
        func read(_ utf8: [UInt8]) throws -> String {
            try ([UInt8(utf8.count)] + utf8).withUnsafeBytes {
                var reader = ByteReader($0); return try reader.string(maxBytes: 64)
            }
        }
        #expect(try read(Array("lunch at 12".utf8)) == "lunch at 12")
        #expect(try read([]) == "")
        #expect(try read(Array("점심 커피 ☕️".utf8)) == "점심 커피 ☕️")
        #expect(throws: DecodingError.self) { try read([0x61, 0xFF, 0x62]) }  // a byte UTF-8 never uses
        #expect(throws: DecodingError.self) { try read([0x61, 0xEC, 0xA0]) }  // a sequence cut short
        #expect(throws: DecodingError.self) { try read([0xC0, 0xAF]) }  // an overlong "/"
        #expect(throws: DecodingError.self) { try read([0xED, 0xA0, 0x80]) }  // a UTF-16 surrogate
    }

    @Test func crc32cMatchesTheStandardCheckValue() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(Array("123456789".utf8).withUnsafeBytes { CRC32C.tableChecksum($0) } == 0xE306_9283)
    }

    @Test func crc32cInstructionAgreesWithTheTable() {
        // Where the CPU has the instruction (checked by the first expectation, so the rest is
        // not comparing the table with itself on this machine), both give the same checksum
        // for any length, alignment and starting value.
        #if arch(x86_64)
            #expect(CRC32C.hardwareAvailable)
        #endif
        var rng = SplitMix64(seed: 5)
        for _ in 0..<500 {
            let bytes = (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let skip = bytes.isEmpty ? 0 : Int.random(in: 0..<min(8, bytes.count), using: &rng)
            let start = UInt32.random(in: 0...UInt32.max, using: &rng)
            bytes.withUnsafeBytes { all in
                let part = UnsafeRawBufferPointer(rebasing: all[skip...])
                #expect(CRC32C.checksum(part, continuing: start) == CRC32C.tableChecksum(part, continuing: start), "\(bytes.count) bytes from \(skip)")
            }
        }
    }
}

/// Inputs the random-bytes property once found, kept as fixed cases.
@Suite struct EventCodecRegressionTests {
    @Test func hostileLengthsAndOffsetsThrowInsteadOfTrapping() throws {
        var rng = SplitMix64(seed: 1)
        let event = Event(
            origin: .random(), sequence: 1, timestamp: .zero, actor: "a", entityType: .todo, entityID: .uuid(RandomEvents.uuid(&rng)),
            operation: .update, properties: [.checks: .bools([true])], previousHash: .zero)
        var bytes = EventCodec.encode(event)
        // The bool-list count: replace it with a 10-byte varint of UInt64.max.
        let countAt = bytes.count - 3  // count, packed byte, basis count
        bytes.replaceSubrange(countAt..<countAt + 1, with: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
        #expect(throws: (any Error).self) { try EventCodec.decode(bytes) }

        let dated = Event(
            origin: .random(), sequence: 1, timestamp: .zero, actor: "a", entityType: .expense, entityID: .uuid(RandomEvents.uuid(&rng)),
            operation: .update, properties: [.date: .dateTime(DateTime(epochMillis: 0, offsetMinutes: 0))], previousHash: .zero)
        var dateBytes = EventCodec.encode(dated)
        // The offset (zigzag 0 = one byte 0x00) becomes zigzag Int64.min: the largest varint.
        let offsetAt = dateBytes.count - 2  // offset, basis count
        dateBytes.replaceSubrange(offsetAt..<offsetAt + 1, with: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
        #expect(throws: (any Error).self) { try EventCodec.decode(dateBytes) }
    }

    /// An origin's sequence counts its events, so none is past the largest log index: a larger
    /// one (a peer's, a bundle's, a damaged disk's) is refused where it is decoded — in an event,
    /// its routing fields, and a seal's chains. Found by review: a frame of two events of one
    /// origin, the first at sequence UInt64.max, trapped the verifier and a recovery at the
    /// `+ 1` that names the next event of the chain.
    @Test func aSequencePastTheLargestLogIndexIsRefusedWhereverItIsDecoded() throws {
        for (sequence, decodes) in [(SegmentFormat.maxLogIndex, true), (SegmentFormat.maxLogIndex + 1, false), (UInt64.max, false)] {
            let event = Event(
                origin: .random(), sequence: sequence, timestamp: .zero, actor: "a", entityType: .todo, entityID: .uuid(UUID()),
                operation: .delete, properties: [:], previousHash: .zero)
            let bytes = EventCodec.encode(event)
            #expect(((try? EventCodec.decode(bytes)) != nil) == decodes, "sequence \(sequence)")
            #expect(((try? bytes.withUnsafeBytes { try EventCodec.routing($0) }) != nil) == decodes, "sequence \(sequence)")
            var head = LogHead()
            head.advance(past: event, hash: EventCodec.hash(bytes))
            #expect(((try? head.encoded().withUnsafeBytes { try LogHead.decode($0) }) != nil) == decodes, "sequence \(sequence)")
        }
        var beyond = LogHead()
        beyond.lastIndex = SegmentFormat.maxLogIndex + 1
        #expect(throws: DecodingError.self) { try beyond.encoded().withUnsafeBytes { try LogHead.decode($0) } }
    }
}
