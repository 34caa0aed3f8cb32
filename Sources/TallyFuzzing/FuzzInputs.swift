import Foundation
import TallyCore
import TallyLog
import TallyServer
import TallySync

/// What each fuzz target does with one input: decode it the way Tally decodes untrusted bytes.
/// Any input may be rejected (thrown errors are fine); none may crash, hang or overflow. The
/// fuzz executables (libFuzzer) and the regression test (`FuzzRegressionTests`, replaying
/// `Tests/FuzzCorpus/`) call the same functions.
public enum FuzzInputs {
    /// Runs the function of `target` ("Segments", "Events", "RequestBodies") on one input.
    public static func run(_ target: String, _ bytes: UnsafeRawBufferPointer) {
        switch target {
        case "Segments": segment(bytes)
        case "Events": event(bytes)
        default: requestBody(bytes)
        }
    }

    /// A segment file as the log reader and a bundle import read it: frames, checksums,
    /// LZ4 with its window, then every event in every frame.
    public static func segment(_ bytes: UnsafeRawBufferPointer) {
        // Odd-sized inputs are read as the newest segment (torn tails tolerated), even-sized as sealed ones.
        _ = try? SegmentBytes.decodeEvents(bytes, isLast: bytes.count % 2 == 1)
    }

    /// One event's stored bytes, as every reader and every replica receiving it decodes them.
    public static func event(_ bytes: UnsafeRawBufferPointer) {
        guard let event = try? EventCodec.decode(bytes) else { return }
        // What decodes must re-encode to the same bytes (the encoding is canonical), or the hash chain breaks.
        if EventCodec.encode(event) != Array(bytes) {
            fatalError("decoded event re-encodes differently: \(event)")
        }
    }

    /// An HTTP request body: the first byte picks the route, the rest is the body. Entity
    /// bodies go through the strict JSON parser and the entity input rules of each type;
    /// segment pushes through the record stream decoder and the incoming-event verifier.
    public static func requestBody(_ bytes: UnsafeRawBufferPointer) {
        guard let route = bytes.first else { return }
        let body = Array(bytes.dropFirst())
        switch route % 5 {
        case 0, 1, 2:
            let type: EntityType = [.expense, .category, .todo][Int(route % 5)]
            guard let json = try? StrictJSON.parse(body) else { return }
            if let (_, properties) = try? EntitySpec.of(type).decode(json) {
                _ = try? EntitySchema.validate(type, .update, properties)
                _ = try? EntitySchema.validate(type, .create, properties)
            }
        case 3:
            guard let json = try? StrictJSON.parse(body) else { return }
            _ = json.canonicalText
        default:
            var decoder = EventRecords.Decoder()
            var incoming = IncomingEvents(head: LogHead(), localOrigins: [], maximumSkewMillis: 300_000)
            // Fed in two pieces, as a stream arrives.
            let middle = body.count / 2
            func take(_ record: EventRecords.Record) throws {
                switch record {
                case .event(let bytes): try incoming.offer(bytes, source: "fuzz")
                case .signature(let bytes): try incoming.offer(try SignatureRecord.decodeOne(bytes), source: "fuzz")
                }
            }
            do {
                try decoder.feed(body[..<middle], take)
                try decoder.feed(body[middle...], take)
                try decoder.finish()
                try incoming.finishDelivery(source: "fuzz")
                _ = try incoming.takeCovered(source: "fuzz")
            } catch {}
        }
    }
}
