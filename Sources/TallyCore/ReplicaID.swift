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
    public var description: String { uuid.uuidString.lowercased() }

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

    /// Lowercase text form.
    public var lowercased: String { uuidString.lowercased() }
}
