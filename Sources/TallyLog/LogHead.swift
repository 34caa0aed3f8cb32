import TallyCore

/// The last event of one origin's chain: its sequence number and hash.
public struct ChainHead: Hashable, Sendable {
    /// Highest sequence held (contiguous from 1).
    public var sequence: UInt64
    /// Hash of that event; the next event of the origin must name it as `previousHash`.
    public var hash: EventHash

    /// Creates a head.
    public init(sequence: UInt64, hash: EventHash) {
        self.sequence = sequence
        self.hash = hash
    }
}

/// A summary of the log up to some point: how many events, the latest clock reading, and the
/// head of every origin's chain. Sealed segments end with the head as of their last event, so a
/// writer reopening a long log reads only the last seal and the open segment.
public struct LogHead: Hashable, Sendable {
    /// Log index of the last event (0 for an empty log).
    public var lastIndex: UInt64 = 0
    /// Greatest clock reading of any event.
    public var maxTimestamp: HybridTimestamp = .zero
    /// Head of each origin's chain.
    public var chains: [ReplicaID: ChainHead] = [:]

    /// An empty log's head.
    public init() {}

    /// Moves the head past one more event.
    public mutating func advance(past event: Event, hash: EventHash) {
        advance(origin: event.origin, sequence: event.sequence, timestamp: event.timestamp, hash: hash)
    }

    /// Moves the head past one more event, given its chain facts.
    mutating func advance(origin: ReplicaID, sequence: UInt64, timestamp: HybridTimestamp, hash: EventHash) {
        lastIndex += 1
        if timestamp > maxTimestamp { maxTimestamp = timestamp }
        chains[origin] = ChainHead(sequence: sequence, hash: hash)
    }

    func encoded() -> [UInt8] {
        var out = ByteWriter()
        out.varint(lastIndex)
        out.varint(maxTimestamp.millis)
        out.varint(UInt64(maxTimestamp.counter))
        out.varint(UInt64(chains.count))
        for (origin, head) in chains.sorted(by: { $0.key < $1.key }) {
            out.uuid(origin.uuid)
            out.varint(head.sequence)
            out.raw(head.hash.bytes)
        }
        return out.bytes
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) throws(DecodingError) -> LogHead {
        var input = ByteReader(bytes)
        var head = LogHead()
        head.lastIndex = try input.varint()
        guard head.lastIndex <= SegmentFormat.maxLogIndex else { throw DecodingError("last index past the largest, \(SegmentFormat.maxLogIndex)") }
        let millis = try input.varint()
        let counter = try input.varint()
        guard counter <= UInt64(UInt32.max) else { throw DecodingError("clock counter out of range") }
        head.maxTimestamp = HybridTimestamp(millis: millis, counter: UInt32(counter))
        let count = try input.length(max: 1 << 20)
        for _ in 0..<count {
            let origin = ReplicaID(try input.uuid())
            let sequence = try input.varint()
            try EventCodec.checkSequence(sequence)
            head.chains[origin] = ChainHead(sequence: sequence, hash: EventHash(bytes: try input.take(32)))
        }
        guard input.atEnd else { throw DecodingError("unexpected bytes after the seal summary") }
        return head
    }
}
