import Foundation
import TallyCore
import TallyLog

/// Why incoming events were refused. Nothing of a refused batch is applied; a sync that streams
/// keeps the batches verified before it (`kept`).
public struct SyncRejection: Error, Sendable, CustomStringConvertible {
    /// Where: a file and offset, or a peer.
    public var source: String
    /// What was wrong.
    public var reason: String
    /// The peer's HTTP status, when it refused a request (401: the credentials are not
    /// accepted; 503: busy); nil when what it sent was refused here.
    public var httpStatus: Int?
    /// The origin whose chain the two sides hold differently (each holds an event the other
    /// does not under one sequence): two live copies of one replica, or a forgery.
    public var forkedOrigin: ReplicaID?
    /// Events the same sync verified and applied before this refusal (a pull keeps its complete
    /// batches; a failure after the pull keeps all it brought).
    public var kept = 0

    public init(source: String, reason: String, httpStatus: Int? = nil, forkedOrigin: ReplicaID? = nil) {
        self.source = source
        self.reason = reason
        self.httpStatus = httpStatus
        self.forkedOrigin = forkedOrigin
    }

    public var description: String {
        "rejected \(source): \(reason); " + (kept > 0 ? "the \(kept) events received before it were kept" : "nothing was applied")
    }
}

/// Checks events from another replica before anything is applied: each must decode, must not
/// be local-only, must not be stamped too far in the future, must continue its origin's chain
/// exactly (sequence + 1, previous hash = the hash held), must obey the field rules of its
/// schema version (`EntitySchema.checkIncoming`), like a local write, and must be covered by a
/// head signed with its origin's pinned key (`offer(_:SignatureRecord…)`). Events already held
/// are skipped, so receiving the same thing twice is a no-op.
///
/// Signatures: a signed head "origin O's chain ends at #n with hash h" vouches, through the
/// hash chain, for every event of O up to #n. Events are handed out (`takeCovered`) only up to
/// the last point where every origin's new events were covered by such a head; each handed-out
/// run is re-checked with one signature verification per origin (the last head of each run), so
/// the cost does not grow with the number of batches a sender signed.
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
    /// A rule on who may bring each new event: nil admits it, a text refuses it (saying why).
    /// Checked after the chain, before the field rules (`StreamReceiver`'s `admit`).
    public var admit: (@Sendable (Event) -> String?)?
    /// The pinned key of each origin as this delivery has it so far (pins held + learned).
    public private(set) var keys: [ReplicaID: OriginKey]
    /// The pins as recorded before the records not yet taken.
    private var recordedKeys: [ReplicaID: OriginKey]
    /// Origins with accepted events no signed head has covered yet, with the first of them.
    private var uncovered: [ReplicaID: UInt64] = [:]
    /// The origin of the last event accepted, if it is in `uncovered`.
    private var lastUncovered: ReplicaID?
    /// Signature records that cover accepted events (and rotations), in arrival order, each
    /// with how many of `accepted` came before it.
    private var records: [(after: Int, record: SignatureRecord)] = []
    /// How many of `accepted` and `records` are covered (every origin's events signed).
    private var coveredEvents = 0
    private var coveredRecords = 0
    /// Bytes of the events in `accepted`, and of the covered ones among them.
    public private(set) var acceptedBytes = 0
    private var coveredBytes = 0
    /// Each origin's sequence as held before this delivery (rotations at or before it are history).
    private let heldAtStart: [ReplicaID: UInt64]
    /// Rotations taken in this delivery (a bound: a real replica rotates rarely).
    private var rotationsTaken = 0
    /// Every record must be checked, none passed over: for files adopted as they are, whose
    /// signatures frames become this replica's own (`SegmentBundle.adoptIntoEmptyLog`).
    public var checksEveryRecord = false

    /// Starts from the receiver's head and the origins' pinned keys.
    public init(
        head: LogHead, localOrigins: Set<ReplicaID>, keys: [ReplicaID: OriginKey] = [:], maximumSkewMillis: UInt64,
        wallMillis: UInt64 = HybridClock.wallMillis()
    ) {
        chains = head.chains
        self.maximumSkewMillis = maximumSkewMillis
        self.wallMillis = wallMillis
        self.localOrigins = localOrigins
        self.keys = keys
        recordedKeys = keys
        heldAtStart = head.chains.mapValues(\.sequence)
    }

    /// Events accepted and waiting for a signed head, in bytes.
    public var uncoveredBytes: Int { acceptedBytes - coveredBytes }

    /// Starts from `writer`'s head and the keys pinned in its log directory.
    public init(receivingInto writer: LogWriter, maximumSkewMillis: UInt64) throws {
        self.init(
            head: writer.head, localOrigins: [writer.localOrigin, writer.localOnlyOrigin],
            keys: try OriginKeyStore(logDirectory: writer.directory).keys(), maximumSkewMillis: maximumSkewMillis)
    }

    /// Events accepted and waiting for a signed head to cover them.
    public var uncoveredCount: Int { accepted.count - coveredEvents }

    /// Drops what was accepted but not handed out (a refused batch); the chains are not rewound,
    /// so the receiver stops here.
    public mutating func discardPending() {
        accepted = []
        records = []
        (coveredEvents, coveredRecords, acceptedBytes, coveredBytes) = (0, 0, 0, 0)
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
        if try check(event, hash: hash, source: source()) {
            accepted.append((bytes, event))
            acceptedBytes += bytes.count
        }
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
            throw SyncRejection(
                source: source(),
                reason: "\(label) claims this replica's own origin; only this replica writes that chain (a forged event, or a copy of this replica)",
                forkedOrigin: event.origin)
        }
        if event.sequence <= heldSequence {
            // This replica's own last event echoed back (`Ledger.sync(echoingOwnLast:)`) with
            // another hash: another replica wrote under its origin — a restored copy of it.
            if localOrigins.contains(event.origin), event.sequence == heldSequence, hash != held?.hash {
                throw SyncRejection(
                    source: source(), reason: "\(label) differs from this replica's own #\(event.sequence) (a copy of this replica wrote under its origin)",
                    forkedOrigin: event.origin)
            }
            if localOrigins.contains(event.origin) || event.sequence < heldSequence || hash == held?.hash {
                alreadyHeld += 1
                return false
            }
            throw SyncRejection(
                source: source(), reason: "\(label) differs from the #\(event.sequence) this replica holds (a forged or forked chain)",
                forkedOrigin: event.origin)
        }
        guard event.sequence == heldSequence + 1 else {
            throw SyncRejection(source: source(), reason: "\(label) arrives before #\(heldSequence + 1)…#\(event.sequence - 1) of its origin (a gap)")
        }
        guard event.previousHash == (held?.hash ?? .zero) else {
            throw SyncRejection(
                source: source(), reason: "\(label) does not continue its origin's hash chain (edited, forged or forked)",
                forkedOrigin: event.origin)
        }
        // Who may bring it: a member's push brings only that member's own events.
        if let admit, let refusal = admit(event) {
            throw SyncRejection(source: source(), reason: "\(label): \(refusal)")
        }
        // The same field rules as a local write: a peer's values reach the views and every replica after it.
        do { try EntitySchema.checkIncoming(event) } catch {
            throw SyncRejection(source: source(), reason: "\(label) (\(event.entityType) \(event.entityID)) breaks the field rules: \(error)")
        }
        // A ledger's version vector names every origin it holds, and a peer reads at most 1 MiB
        // of it: a delivery of thousands of made-up origins (each one signed event) would end
        // this replica's syncs, and those of every replica that pulls from it, for good.
        if slot == nil, chains.count >= Self.maxOrigins {
            throw SyncRejection(
                source: source(),
                reason:
                    "\(label) would bring this ledger past \(Self.maxOrigins) origins (replicas that ever wrote); its version vector must stay small enough for every peer to read"
            )
        }
        let head = ChainHead(sequence: event.sequence, hash: hash)
        if let slot { chains.values[slot] = head } else { chains[event.origin] = head }
        if event.origin != lastUncovered {  // runs of one origin cost one lookup
            if uncovered[event.origin] == nil { uncovered[event.origin] = event.sequence }
            lastUncovered = event.origin
        }
        acceptedCount += 1
        return true
    }

    /// Takes one signature record that came with the events (after the events it covers).
    /// A head that covers new events must name exactly the chain they built and carry the key
    /// pinned for its origin (the first one seen pins it: trust on first use); a rotation must be
    /// signed by the pinned key. Records for this replica's own chains, heads that cover
    /// nothing new, and rotations of an origin with no pinned key are passed over.
    public mutating func offer(_ record: SignatureRecord, source: @autoclosure () -> String) throws {
        let origin = record.origin
        guard !localOrigins.contains(origin) else {
            if checksEveryRecord { throw SyncRejection(source: source(), reason: "a signature record claims this replica's own origin \(origin)") }
            return
        }
        switch record {
        case .head(let signed):
            if checksEveryRecord { try checkPassedOver(signed, source: source()) }
            guard uncovered[origin] != nil, let chain = chains[origin], signed.sequence >= chain.sequence else { return }
            guard signed.sequence == chain.sequence, signed.hash == chain.hash else {
                throw SyncRejection(
                    source: source(),
                    reason: "the signed head #\(signed.sequence) of origin \(origin) names an event this delivery did not bring (a forged or forked chain)")
            }
            if let pinned = keys[origin], pinned != signed.key {
                throw SyncRejection(
                    source: source(),
                    reason:
                        "events of origin \(origin) are signed with key \(signed.key), not the key pinned for it (\(pinned)): a chain re-signed by another replica is refused"
                )
            }
            keys[origin] = signed.key
            uncovered[origin] = nil
            if lastUncovered == origin { lastUncovered = nil }
            records.append((accepted.count, record))
        case .rotation(let rotation):
            // A rotation stands where its origin's chain is at `afterSequence`: before that is
            // history this replica has followed (or passed), after it is out of place.
            let chainSequence = chains[origin]?.sequence ?? 0
            let pinned = keys[origin]
            if !checksEveryRecord {
                let isHistory = rotation.afterSequence <= heldAtStart[origin] ?? 0
                if pinned == rotation.newKey { return }  // followed already
                // No key is pinned for the origin: a rotation is never a first contact (the heads
                // of its events pin their key when they come). Taken, a made-up one would pin an
                // origin this replica has not met to the sender's key, shutting out the real one.
                if pinned == nil { return }
                // Within what this replica held before: one it cannot place (an earlier point of
                // the chain), or that a later rotation at the same point has passed, changes nothing.
                if isHistory, rotation.afterSequence < chainSequence || (pinned != nil && pinned != rotation.oldKey) { return }
            }
            guard rotation.afterSequence == chainSequence else {
                throw SyncRejection(
                    source: source(),
                    reason: "a key rotation of origin \(origin) claims to follow #\(rotation.afterSequence), but its chain stands at #\(chainSequence) here")
            }
            guard pinned == nil || pinned == rotation.oldKey else {
                throw SyncRejection(
                    source: source(), reason: "a key rotation of origin \(origin) is signed with key \(rotation.oldKey), not its pinned key \(pinned!)")
            }
            guard rotation.isValid else {
                throw SyncRejection(source: source(), reason: "a key rotation of origin \(origin) carries a signature that does not verify")
            }
            rotationsTaken += 1
            guard rotationsTaken <= Self.maxRotationsPerDelivery else {
                throw SyncRejection(source: source(), reason: "more than \(Self.maxRotationsPerDelivery) key rotations in one delivery")
            }
            keys[origin] = rotation.newKey
            records.append((accepted.count, record))
        }
        if uncovered.isEmpty { (coveredEvents, coveredRecords, coveredBytes) = (accepted.count, records.count, acceptedBytes) }
    }

    /// The most key rotations one delivery may carry.
    public static let maxRotationsPerDelivery = 64

    /// The most origins (replicas that ever wrote, this one's own included) a ledger takes
    /// events from: ~420 KB of version vector, within the 1 MiB a peer reads.
    public static let maxOrigins = 10_000

    /// In `checksEveryRecord` mode, a head that covers nothing new (and would be passed over) is
    /// still checked: its signature, its key against the pin, its place in the chain.
    private func checkPassedOver(_ signed: SignedHead, source: @autoclosure () -> String) throws {
        guard let chain = chains[signed.origin], signed.sequence <= chain.sequence else {
            throw SyncRejection(source: source(), reason: "the signed head #\(signed.sequence) of origin \(signed.origin) stands before its event")
        }
        if signed.sequence == chain.sequence, signed.hash != chain.hash {
            throw SyncRejection(
                source: source(), reason: "the signed head #\(signed.sequence) of origin \(signed.origin) names another event than the bundle holds")
        }
        if let pinned = keys[signed.origin], pinned != signed.key {
            throw SyncRejection(
                source: source(), reason: "a head of origin \(signed.origin) is signed with key \(signed.key), not the key pinned for it (\(pinned))")
        }
        guard signed.isValid else {
            throw SyncRejection(
                source: source(), reason: "the signed head #\(signed.sequence) of origin \(signed.origin) does not verify with key \(signed.key) (forged)")
        }
    }

    /// The delivery is complete: every accepted event must be covered by a signed head.
    public mutating func finishDelivery(source: @autoclosure () -> String) throws {
        if let (origin, first) = uncovered.min(by: { $0.key < $1.key }) {
            let last = chains[origin]?.sequence ?? first
            throw SyncRejection(
                source: source(),
                reason:
                    "events #\(first)…#\(last) of origin \(origin) came without a head signed by that origin's key (unsigned, forged or squatted events are refused)"
            )
        }
        (coveredEvents, coveredRecords, coveredBytes) = (accepted.count, records.count, acceptedBytes)
    }

    /// How far apart (in events) the heads a receiver keeps and verifies may be at most.
    public static let headSpacing = 4_096

    /// Everything covered so far, to append: the events, the signature records to store among
    /// them (thinned to a head per origin every `headSpacing` events and the last of each run;
    /// each kept head's signature is verified here), and the pins they add, to record before
    /// appending. Throws, handing out nothing, if a signature does not verify.
    public mutating func takeCovered(source: @autoclosure () -> String) throws -> CoveredDelivery {
        let points = SignaturePoint.thinned(Array(records[..<coveredRecords]), spacing: Self.headSpacing)
        var pins: [ReplicaID: PinChange] = [:]
        for record in points.flatMap(\.records) {
            switch record {
            case .head(let signed):
                guard signed.isValid else {
                    throw SyncRejection(
                        source: source(),
                        reason: "the signed head #\(signed.sequence) of origin \(signed.origin) does not verify with key \(signed.key) (forged)")
                }
                if recordedKeys[signed.origin] == nil {
                    recordedKeys[signed.origin] = signed.key
                    pins[signed.origin] = PinChange(pin: PinnedOriginKey(key: signed.key, pinnedBy: "first contact"), replacing: nil)
                }
            case .rotation(let rotation):
                let replacing = pins[rotation.origin].map(\.replacing) ?? recordedKeys[rotation.origin]
                pins[rotation.origin] = PinChange(pin: PinnedOriginKey(key: rotation.newKey, pinnedBy: "rotation"), replacing: replacing)
                recordedKeys[rotation.origin] = rotation.newKey
            }
        }
        let events = Array(accepted[..<coveredEvents])
        accepted.removeFirst(coveredEvents)
        records.removeFirst(coveredRecords)
        let taken = coveredEvents
        records = records.map { ($0.after - taken, $0.record) }
        acceptedBytes -= coveredBytes
        (coveredEvents, coveredRecords, coveredBytes) = (0, 0, 0)
        return CoveredDelivery(events: events, signatures: points, pins: pins)
    }
}

/// A verified, signed part of a delivery, ready to append (`OriginKeyStore.record` the pins
/// first, then `LogWriter.appendEncoded(events, signaturePoints:)`).
public struct CoveredDelivery: Sendable {
    public var events: [(bytes: [UInt8], event: Event)]
    public var signatures: [SignaturePoint]
    public var pins: [ReplicaID: PinChange]

    public var isEmpty: Bool { events.isEmpty && signatures.isEmpty }

    /// Records the pins in `writer`'s log directory, then appends durably; returns the log index
    /// of the last event appended.
    @discardableResult
    public func append(to writer: LogWriter) throws -> UInt64 {
        try OriginKeyStore(logDirectory: writer.directory).record(pins)
        return try writer.appendEncoded(events, signaturePoints: signatures)
    }
}
