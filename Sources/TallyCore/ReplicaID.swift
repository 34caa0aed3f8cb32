import Foundation

/// The identity of one replica (or of one replica's local-only event chain).
///
/// Created once per data directory and never changed. Ordered by its bytes, which is the
/// tie-breaker between writes with equal clock stamps.
public struct ReplicaID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The underlying UUID.
    public let uuid: UUID

    /// Wraps an existing UUID.
    public init(_ uuid: UUID) { self.uuid = uuid }

    /// A fresh random replica id.
    public static func random() -> ReplicaID { ReplicaID(.random()) }

    /// Parses the canonical lowercase or uppercase UUID text.
    public init?(string: String) {
        guard let uuid = UUID(uuidString: string) else { return nil }
        self.uuid = uuid
    }

    /// Lowercase UUID text, the form used everywhere Tally prints an id.
    public var description: String { uuid.lowercased }

    public static func < (lhs: ReplicaID, rhs: ReplicaID) -> Bool {
        lhs.uuid.isOrderedBefore(rhs.uuid)
    }

    public func hash(into hasher: inout Hasher) { uuid.hashAsWords(into: &hasher) }
}

extension UUID {
    /// Byte-wise order, the same on every platform (Foundation's own `<` is newer than Swift 6.0 on Linux).
    public func isOrderedBefore(_ other: UUID) -> Bool {
        withUnsafeBytes(of: uuid) { a in
            withUnsafeBytes(of: other.uuid) { b in
                a.lexicographicallyPrecedes(b)
            }
        }
    }

    /// Feeds the 16 bytes to `hasher` as two words. `UUID`'s own hashing feeds them as a byte
    /// buffer, which costs more; ids are hashed for every event a fold or a check takes.
    @inlinable public func hashAsWords(into hasher: inout Hasher) {
        withUnsafeBytes(of: uuid) { bytes in
            hasher.combine(bytes.loadUnaligned(as: UInt64.self))
            hasher.combine(bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
    }

    /// Lowercase text form (formatted by hand: it names every row the views write).
    public var lowercased: String {
        String(unsafeUninitializedCapacity: 36) { writeLowercased(into: $0) }
    }

    /// Appends `lowercased`'s UTF-8 to `out` without making a string.
    public func appendLowercased(to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { buffer in
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<writeLowercased(into: buffer)]))
        }
    }

    /// Writes the 36 characters of the lowercase form into `buffer`; returns 36.
    private func writeLowercased(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        withUnsafeBytes(of: uuid) { bytes in
            var position = 0
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    buffer[position] = UInt8(ascii: "-")
                    position += 1
                }
                buffer[position] = Self.hexDigit(byte >> 4)
                buffer[position + 1] = Self.hexDigit(byte & 0x0F)
                position += 2
            }
            return position
        }
    }

    /// The lowercase hex digit for 0…15.
    private static func hexDigit(_ value: UInt8) -> UInt8 { value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10 }
}
