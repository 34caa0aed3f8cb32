/// A hybrid logical clock reading: physical milliseconds since 1970 plus a logical counter.
///
/// Compared first by milliseconds, then by counter. `WriteStamp` adds the origin replica as
/// the final tie-breaker, which makes the order of writes total.
public struct HybridTimestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var millis: UInt64
    /// Logical counter, for events in the same millisecond or behind a clock that ran ahead.
    public var counter: UInt32

    /// Creates a reading.
    public init(millis: UInt64, counter: UInt32) {
        self.millis = millis
        self.counter = counter
    }

    /// The reading before every other.
    public static let zero = HybridTimestamp(millis: 0, counter: 0)

    public static func < (lhs: HybridTimestamp, rhs: HybridTimestamp) -> Bool {
        (lhs.millis, lhs.counter) < (rhs.millis, rhs.counter)
    }

    /// `millis.counter`, e.g. `1767225600000.3`.
    public var description: String { "\(millis).\(counter)" }
}

/// The stamp that decides a property-level last-writer-wins race: clock reading, then origin.
public struct WriteStamp: Hashable, Comparable, Sendable {
    /// The clock reading of the write.
    public var timestamp: HybridTimestamp
    /// The replica that made the write.
    public var origin: ReplicaID

    /// Creates a stamp.
    public init(timestamp: HybridTimestamp, origin: ReplicaID) {
        self.timestamp = timestamp
        self.origin = origin
    }

    public static func < (lhs: WriteStamp, rhs: WriteStamp) -> Bool {
        if lhs.timestamp != rhs.timestamp { return lhs.timestamp < rhs.timestamp }
        return lhs.origin < rhs.origin
    }
}
