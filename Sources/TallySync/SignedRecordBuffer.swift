import TallyCore
import TallyLog

/// The records a stream sends, gathered so that nothing unsigned goes out (`HeldUntilSigned`)
/// and, as a log is normally read, nothing is copied twice: each event is written into the
/// buffer at once and its place noted until its origin's head is read — normally in the
/// signatures frame right behind its batch. Only events whose head has not come by the time
/// the buffer is handed out (or a rotation of their origin comes first) are moved out of it,
/// to wait in a `HeldUntilSigned` until a head covers them.
struct SignedRecordBuffer {
    /// The records gathered so far.
    private(set) var bytes: [UInt8] = []
    /// How many of them are events.
    private var count = 0
    /// Events in `bytes` whose head has not been read yet: per origin, in order.
    private var unsignedInBuffer: [ReplicaID: [(sequence: UInt64, range: Range<Int>)]] = [:]
    /// How long one origin's run without a head may grow before it is given up.
    private let limits: EventRecords.UnsignedLimits
    /// Events moved out of `bytes` (each framed), and rotations held among them.
    private var waiting: HeldUntilSigned<(framed: [UInt8], isEvent: Bool)>

    init(limits: EventRecords.UnsignedLimits = EventRecords.streamLimits) {
        self.limits = limits
        waiting = HeldUntilSigned(limits: limits)
    }

    /// Adds an event of `origin`: into the buffer, unless earlier events of its origin wait
    /// (it then waits behind them).
    mutating func add(event: UnsafeRawBufferPointer, origin: ReplicaID, sequence: UInt64) {
        guard !waiting.isHolding(origin) else {
            var framed: [UInt8] = []
            EventRecords.append(event, to: &framed)
            waiting.hold((framed, true), origin: origin, sequence: sequence, bytes: event.count)
            return
        }
        let start = bytes.count
        EventRecords.append(event, to: &bytes)
        unsignedInBuffer[origin, default: []].append((sequence, start..<bytes.count))
        count += 1
        // A long run without a head (a log from before signing): moved out, where each origin
        // is held to a receiver's limits (and given up past them), rather than kept here
        // whatever its size.
        if unsignedInBuffer[origin]!.count > limits.events || bytes.count > limits.bytes {
            moveOutWhatIsUnsigned()
        }
    }

    /// A head was read: what of its origin it covers may go (what waited goes now, before it);
    /// `send`: the head itself goes too (it covers something the other side lacks).
    mutating func add(head signed: SignedHead, send: Bool) {
        if let covered = unsignedInBuffer[signed.origin]?.prefix(while: { $0.sequence <= signed.sequence }).count, covered > 0 {
            unsignedInBuffer[signed.origin]!.removeFirst(covered)
            if unsignedInBuffer[signed.origin]!.isEmpty { unsignedInBuffer[signed.origin] = nil }
        }
        for released in waiting.release(by: signed) {
            bytes.append(contentsOf: released.framed)
            if released.isEvent { count += 1 }
        }
        if send, !waiting.hasGivenUp(signed.origin) { EventRecords.append(.head(signed), to: &bytes) }
    }

    /// A rotation to send: after the events it follows, so it waits with them if they wait.
    mutating func add(rotation: KeyRotation) {
        if unsignedInBuffer[rotation.origin] != nil { moveOutWhatIsUnsigned() }
        guard waiting.isHolding(rotation.origin) else {
            EventRecords.append(.rotation(rotation), to: &bytes)
            return
        }
        var framed: [UInt8] = []
        EventRecords.append(.rotation(rotation), to: &framed)
        waiting.hold(rotation: (framed, false), origin: rotation.origin, afterSequence: rotation.afterSequence)
    }

    /// Hands the buffer to `chunk` (with its count of events) and empties it; events in it
    /// still waiting for their head stay behind.
    mutating func handOut(_ chunk: ([UInt8], Int) throws -> Void) throws {
        moveOutWhatIsUnsigned()
        guard !bytes.isEmpty else { return }
        try chunk(bytes, count)
        bytes.removeAll(keepingCapacity: true)
        count = 0
    }

    /// Events not sent: given up, or still waiting for a head when the log was read.
    var leftOut: Int { waiting.leftOut }
    /// The refusal naming an origin given up, if any (said once the rest went).
    var givenUpRun: LeftOutRun? { waiting.givenUpRun }

    /// The log is read: what still waits for a head is left out.
    mutating func finish() {
        moveOutWhatIsUnsigned()
        waiting.finish()
    }

    /// Moves every event in the buffer whose head has not been read into `waiting`, in order,
    /// and closes the gaps they leave.
    private mutating func moveOutWhatIsUnsigned() {
        guard !unsignedInBuffer.isEmpty else { return }
        var removed: [Range<Int>] = []
        for (origin, events) in unsignedInBuffer {
            for (sequence, range) in events {
                waiting.hold((Array(bytes[range]), true), origin: origin, sequence: sequence, bytes: range.count - 4)
                removed.append(range)
            }
        }
        unsignedInBuffer.removeAll()
        removed.sort { $0.lowerBound < $1.lowerBound }
        var kept: [UInt8] = []
        kept.reserveCapacity(bytes.count)
        var from = 0
        for range in removed {
            kept.append(contentsOf: bytes[from..<range.lowerBound])
            from = range.upperBound
        }
        kept.append(contentsOf: bytes[from...])
        bytes = kept
        count -= removed.count
    }
}
