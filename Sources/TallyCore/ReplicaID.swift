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
    public static func random() -> ReplicaID { ReplicaID(UUID()) }

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

    /// Lowercase text form (formatted by hand: it names every row the views write).
    public var lowercased: String {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        return withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { buffer in
                var position = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        buffer[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    buffer[position] = hex[Int(byte >> 4)]
                    buffer[position + 1] = hex[Int(byte & 0x0F)]
                    position += 2
                }
                return position
            }
        }
    }
}
