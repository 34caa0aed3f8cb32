import TallyCore
import TallyLog

/// Nothing unsigned leaves this replica: a sender (a stream, a bundle) hands each event it
/// would send to `hold`, and gets it back from `release(by:)` once a signed head of its origin
/// covers it. A log normally signs every durable batch right after its events, so events wait
/// here only for the signatures frame behind them. They wait for good where a crash cut that
/// frame off a batch received from a peer — this replica cannot sign another origin's chain —
/// and stay here, unsent, until a later head of their origin arrives and covers them. Before,
/// they were sent, and every peer refused the whole delivery for them, at every sync.
///
/// A key rotation of an origin whose events wait is held with them, in its place: the
/// receiver takes a rotation only where it follows the chain (`IncomingEvents`), and the
/// head that covers the waiting events comes after it, signed with the new key.
///
/// With `limits` (a stream's: what a receiver takes without a head, `StreamReceiver`), an
/// origin that waits for more is given up for the delivery: what waits of it is dropped, and
/// its later events, rotations and heads are not sent — a receiver would refuse the run — while
/// the rest of the log, every other origin's signed events, still goes; the sender then says
/// so (`givenUpRun`, `recordStream`). (A first version refused the whole
/// delivery at the run, so one retired device's run from before signing stopped every sync of
/// the replicas that lacked it, and a second left the run out without a word.)
struct HeldUntilSigned<Item> {
    private var held: [ReplicaID: [(sequence: UInt64, item: Item, bytes: Int, isEvent: Bool)]] = [:]
    /// Per origin: the bytes, and the events, of what waits.
    private var heldBytes: [ReplicaID: Int] = [:]
    private var heldEvents: [ReplicaID: Int] = [:]
    let limits: (events: Int, bytes: Int)?
    /// Events left unsent: those still waiting when the delivery ended, and every one of an
    /// origin given up.
    private(set) var leftOut = 0
    /// Origins whose run without a head passed `limits`, with the first sequence of the run:
    /// nothing more of them goes.
    private(set) var givenUp: [ReplicaID: UInt64] = [:]

    init(limits: (events: Int, bytes: Int)? = nil) { self.limits = limits }

    /// Whether events of `origin` wait (or it was given up: its events go to `hold`, which
    /// drops them).
    func isHolding(_ origin: ReplicaID) -> Bool { held[origin] != nil || givenUp[origin] != nil }

    /// Whether nothing more of `origin` goes in this delivery, its heads included.
    func hasGivenUp(_ origin: ReplicaID) -> Bool { givenUp[origin] != nil }

    /// Holds an event of `origin` (`bytes` long) until a head covers it.
    mutating func hold(_ item: Item, origin: ReplicaID, sequence: UInt64, bytes: Int) {
        guard givenUp[origin] == nil else {
            leftOut += 1
            return
        }
        held[origin, default: []].append((sequence, item, bytes, true))
        let (events, total) = (heldEvents[origin, default: 0] + 1, heldBytes[origin, default: 0] + bytes)
        (heldEvents[origin], heldBytes[origin]) = (events, total)
        if let limits, events > limits.events || total > limits.bytes {
            leftOut += events
            givenUp[origin] = held[origin]?.first?.sequence ?? sequence
            (held[origin], heldEvents[origin], heldBytes[origin]) = (nil, nil, nil)
        }
    }

    /// Holds a rotation of `origin` among its waiting events (only while some wait; one of an
    /// origin given up is dropped).
    mutating func hold(rotation item: Item, origin: ReplicaID, afterSequence: UInt64) {
        guard givenUp[origin] == nil else { return }
        held[origin, default: []].append((afterSequence, item, 0, false))
    }

    /// What a head lets go: what waits of its origin up to it, in order.
    mutating func release(by signed: SignedHead) -> [Item] {
        guard var waiting = held[signed.origin] else { return [] }
        let covered = waiting.prefix { $0.sequence <= signed.sequence }
        guard !covered.isEmpty else { return [] }
        waiting.removeFirst(covered.count)
        held[signed.origin] = waiting.isEmpty ? nil : waiting
        heldBytes[signed.origin] = waiting.isEmpty ? nil : heldBytes[signed.origin]! - covered.reduce(0) { $0 + $1.bytes }
        heldEvents[signed.origin] = waiting.isEmpty ? nil : heldEvents[signed.origin]! - covered.count { $0.isEvent }
        return covered.map(\.item)
    }

    /// Why the delivery is incomplete, if an origin was given up: the first one's run.
    var givenUpRun: LeftOutRun? {
        guard let limits, let (origin, first) = givenUp.min(by: { $0.key < $1.key }) else { return nil }
        return LeftOutRun(origin: origin, from: first, limits: limits)
    }

    /// The delivery ends: what still waits is left out.
    mutating func finish() {
        leftOut += held.values.reduce(0) { $0 + $1.count { $0.isEvent } }
        held.removeAll()
        heldBytes.removeAll()
        heldEvents.removeAll()
    }
}

/// An origin's run a delivery left out: from `from` on, no signed head within what a receiver
/// takes (a device's log from before signing). Not the sender's to sign: it fails nothing,
/// and is said — in a push's report, in a pull's server log.
public struct LeftOutRun: Sendable, Equatable, CustomStringConvertible {
    public let origin: ReplicaID
    public let from: UInt64
    let limits: EventRecords.UnsignedLimits

    public static func == (a: LeftOutRun, b: LeftOutRun) -> Bool { a.origin == b.origin && a.from == b.from }

    public var description: String {
        "events of origin \(origin) from #\(from) on have no signed head within \(limits.events) events or \(limits.bytes >> 20) MiB, more than a receiver takes: they were not sent (the other origins' events were)"
    }
}
