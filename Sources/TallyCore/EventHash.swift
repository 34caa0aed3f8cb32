/// A SHA-256 digest of an event's canonical encoding; each event carries its predecessor's
/// (same origin), which makes every origin's events a tamper-evident chain.
public struct EventHash: Hashable, Sendable, CustomStringConvertible {
    /// The 32 digest bytes as four big-endian words (no heap allocation per event).
    public var words: SIMD4<UInt64>

    /// The hash that the first event of every origin names as its predecessor.
    public static let zero = EventHash(words: .zero)

    /// Creates a hash from its words.
    public init(words: SIMD4<UInt64>) { self.words = words }

    /// Creates a hash from exactly 32 bytes (most significant first).
    public init(bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count == 32, "an event hash has 32 bytes")
        words = SIMD4(
            UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
            UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
            UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
            UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
    }

    /// Creates a hash from an array of exactly 32 bytes.
    public init(bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { EventHash(bytes: $0) }
    }

    /// The 32 bytes, most significant first.
    public var bytes: [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(32)
        for lane in 0..<4 {
            for shift in stride(from: 56, through: 0, by: -8) { result.append(UInt8(truncatingIfNeeded: words[lane] >> UInt64(shift))) }
        }
        return result
    }

    /// Lowercase hex.
    public var description: String { Hex.lowercase(bytes) }

    /// Appends the 64 lowercase hex digits to `out`, straight from the words.
    public func appendHex(to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
            for lane in 0..<4 {
                let word = words[lane]
                for nibble in 0..<16 {
                    let value = UInt8(truncatingIfNeeded: word >> UInt64(60 - 4 * nibble)) & 0x0F
                    buffer[lane * 16 + nibble] = value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") - 10 + value
                }
            }
            out.append(contentsOf: buffer)
        }
    }

    /// Parses 64 hex digits.
    public init?(hex: String) {
        let chars = Array(hex.utf8)
        guard chars.count == 64 else { return nil }
        var bytes: [UInt8] = []
        for i in stride(from: 0, to: 64, by: 2) {
            guard let byte = UInt8(String(decoding: chars[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.init(bytes: bytes)
    }
}

import Foundation
