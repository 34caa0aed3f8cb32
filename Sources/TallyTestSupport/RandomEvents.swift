import Foundation
import TallyCore

/// A small deterministic random generator: property tests draw one UInt64 seed from their
/// generator and derive everything else from it, so a printed seed replays exactly.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random events with every field and value type exercised, for codec round trips.
public enum RandomEvents {
    public static func uuid(_ rng: inout SplitMix64) -> UUID {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { buffer in
            for index in buffer.indices { buffer[index] = UInt8.random(in: 0...255, using: &rng) }
        }
        return UUID(uuid: bytes)
    }

    public static func text(_ rng: inout SplitMix64, maxLength: Int = 40) -> String {
        let alphabet = Array("abcxyz 0123 가계부점심 🍚\"\\\n\té")
        return String((0..<Int.random(in: 0...maxLength, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
    }

    public static func value(_ rng: inout SplitMix64) -> PropertyValue {
        switch Int.random(in: 0...8, using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .int(Int64.random(in: Int64.min...Int64.max, using: &rng))
        case 3: return .string(text(&rng))
        case 4: return .uuid(uuid(&rng))
        case 5:
            return .dateTime(
                DateTime(
                    epochMillis: Int64.random(in: -10_000_000_000_000...10_000_000_000_000, using: &rng),
                    offsetMinutes: Int16.random(in: -1080...1080, using: &rng)))
        case 6: return .strings((0..<Int.random(in: 0...5, using: &rng)).map { _ in text(&rng, maxLength: 8) })
        case 7: return .bools((0..<Int.random(in: 0...40, using: &rng)).map { _ in Bool.random(using: &rng) })
        default: return .json("{\"k\":\(Int.random(in: 0...1000, using: &rng))}")
        }
    }

    public static func event(_ rng: inout SplitMix64) -> Event {
        var properties: PropertyMap = [:]
        for name in PropertyName.allCases where Int.random(in: 0...3, using: &rng) == 0 { properties[name] = value(&rng) }
        var hashBytes = [UInt8](repeating: 0, count: 32)
        for index in hashBytes.indices { hashBytes[index] = UInt8.random(in: 0...255, using: &rng) }
        return Event(
            // Sequences up to SegmentFormat.maxLogIndex, the largest a decoder takes.
            origin: ReplicaID(uuid(&rng)), sequence: UInt64.random(in: 1...(1 << 62), using: &rng),
            timestamp: HybridTimestamp(millis: UInt64.random(in: 0...UInt64.max, using: &rng), counter: UInt32.random(in: 0...UInt32.max, using: &rng)),
            actor: text(&rng, maxLength: 30), isLocalOnly: Bool.random(using: &rng),
            entityType: EntityType.allCases.randomElement(using: &rng)!,
            entityID: Bool.random(using: &rng) ? .uuid(uuid(&rng)) : .settingKey("k" + text(&rng, maxLength: 10)),
            operation: EventOperation.allCases.randomElement(using: &rng)!, properties: properties,
            previousHash: EventHash(bytes: hashBytes))
    }
}
