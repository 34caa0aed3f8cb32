import Foundation
import TallyCore
import TallyLog

/// Why incoming events were refused. Nothing is applied when any is.
public struct SyncRejection: Error, Sendable, CustomStringConvertible {
    /// Where: a file and offset, or a peer.
    public var source: String
    /// What was wrong.
    public var reason: String

    public init(source: String, reason: String) {
        self.source = source
        self.reason = reason
    }

    public var description: String { "rejected \(source): \(reason); nothing was applied" }
}

/// Checks events from another replica before anything is applied: each must decode, must not
/// be local-only, must not be stamped too far in the future, must continue its origin's chain
/// exactly (sequence + 1, previous hash = the hash held), and must obey the field rules of its
/// schema version (`EntitySchema.checkIncoming`), like a local write. Events already held are skipped,
/// so receiving the same thing twice is a no-op.
public struct IncomingEvents {
    /// The chains as they will stand once the accepted events are appended.
    public private(set) var chains: [ReplicaID: ChainHead]
    /// Events to append, in order, with their stored bytes (the ones offered with `offer`).
    public private(set) var accepted: [(bytes: [UInt8], event: Event)] = []
    /// Events accepted so far, by `offer` or `check`.
    public private(set) var acceptedCount = 0
    /// Events skipped because they were already held.
    public private(set) var alreadyHeld = 0
    /// Refuse stamps further than this ahead of local wall time.
    public let maximumSkewMillis: UInt64
    let wallMillis: UInt64
    let localOrigins: Set<ReplicaID>

    /// Starts from the receiver's head.
    public init(head: LogHead, localOrigins: Set<ReplicaID>, maximumSkewMillis: UInt64, wallMillis: UInt64 = HybridClock.wallMillis()) {
        chains = head.chains
        self.maximumSkewMillis = maximumSkewMillis
        self.wallMillis = wallMillis
        self.localOrigins = localOrigins
    }

    /// Hands over the accepted events (to be appended) and forgets them; the chains stay.
    public mutating func takeAccepted() -> [(bytes: [UInt8], event: Event)] {
        let taken = accepted
        accepted = []
        accepted.reserveCapacity(taken.count)  // the next batch is likely as big: no regrowing
        return taken
    }

    /// Checks one event given its stored bytes; throws a rejection naming `source`.
    public mutating func offer(_ bytes: UnsafeRawBufferPointer, source: String) throws {
        let event: Event
        do { event = try EventCodec.decode(bytes) } catch {
            throw SyncRejection(source: source, reason: "an event does not decode (\(error))")
        }
        try offer(Array(bytes), decoded: event, hash: EventCodec.hash(bytes), source: source)
    }

    /// Checks one event already decoded from `bytes` (by a log reader, which also hashed them),
    /// keeping the bytes in `accepted` if it is new.
    public mutating func offer(_ bytes: [UInt8], decoded event: Event, hash: EventHash, source: @autoclosure () -> String) throws {
        if try check(event, hash: hash, source: source()) { accepted.append((bytes, event)) }
    }

    /// Checks one decoded event without keeping it (for a caller that appends the files the
    /// events came in); returns whether it is new, false if already held.
    @discardableResult
    public mutating func check(_ event: Event, hash: EventHash, source: @autoclosure () -> String) throws -> Bool {
        var label: String { "event \(event.origin)#\(event.sequence)" }  // built only for an error message
        if event.isLocalOnly { throw SyncRejection(source: source(), reason: "\(label) is local-only and must never leave its replica") }
        var clock = HybridClock(maximumSkewMillis: maximumSkewMillis)
        do { try clock.observe(event.timestamp, wallMillis: wallMillis) } catch {
            throw SyncRejection(source: source(), reason: "\(label): \(error)")
        }
        // One lookup for an origin already held (every event but each origin's first).
        let slot = chains.index(forKey: event.origin)
        let held = slot.map { chains.values[$0] }
        let heldSequence = held?.sequence ?? 0
        // Only this replica writes its own chains: an event from outside claiming one of them
        // beyond what is held is forged, whatever its hash (an echo of a held one is skipped).
        if localOrigins.contains(event.origin), event.sequence > heldSequence {
            throw SyncRejection(source: source(), reason: "\(label) claims this replica's own origin; only this replica writes that chain (a forged event)")
        }
        if event.sequence <= heldSequence {
            if localOrigins.contains(event.origin) || event.sequence < heldSequence || hash == held?.hash {
                alreadyHeld += 1
                return false
            }
            throw SyncRejection(source: source(), reason: "\(label) differs from the #\(event.sequence) this replica holds (a forged or forked chain)")
        }
        guard event.sequence == heldSequence + 1 else {
            throw SyncRejection(source: source(), reason: "\(label) arrives before #\(heldSequence + 1)…#\(event.sequence - 1) of its origin (a gap)")
        }
        guard event.previousHash == (held?.hash ?? .zero) else {
            throw SyncRejection(source: source(), reason: "\(label) does not continue its origin's hash chain (edited or forged)")
        }
        // The same field rules as a local write: a peer's values reach the views and every replica after it.
        do { try EntitySchema.checkIncoming(event) } catch {
            throw SyncRejection(source: source(), reason: "\(label) (\(event.entityType) \(event.entityID)) breaks the field rules: \(error)")
        }
        let head = ChainHead(sequence: event.sequence, hash: hash)
        if let slot { chains.values[slot] = head } else { chains[event.origin] = head }
        acceptedCount += 1
        return true
    }
}
