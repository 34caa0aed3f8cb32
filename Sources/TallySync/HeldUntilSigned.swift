import TallyCore
import TallyLog

/// Nothing unsigned leaves this replica: a sender (a stream, a bundle) hands each event it
/// would send to `hold`, and gets it back from `signed` once a signed head of its origin covers
/// it. A log normally signs every durable batch right after its events, so events wait here
/// only for the signatures frame behind them. They wait for good where a crash cut that frame
/// off a batch received from a peer — this replica cannot sign another origin's chain — and
/// those events stay here, unsent, until a later head of their origin arrives and covers them.
/// Before, they were sent, and every peer refused the whole delivery for them, at every sync.
///
/// An origin whose held events pass a receiver's limits (`StreamReceiver.maxUnsignedRun`,
/// `maxUnsignedBytes`), or that rotates its key while events wait, is given up for the rest of
/// the delivery: what was held is dropped, and nothing later of that origin is taken, which
/// would leave a gap in its chain.
struct HeldUntilSigned<Item> {
    private var held: [ReplicaID: [(sequence: UInt64, item: Item, bytes: Int)]] = [:]
    private var heldBytes: [ReplicaID: Int] = [:]
    private var givenUp: Set<ReplicaID> = []
    /// Events dropped unsent (held when the delivery ended, or of an origin given up).
    private(set) var leftOut = 0

    /// Whether `origin`'s events may still be taken in this delivery.
    func takes(_ origin: ReplicaID) -> Bool { !givenUp.contains(origin) }

    /// Holds an event of `origin` (`bytes` long) until a head covers it.
    mutating func hold(_ item: Item, origin: ReplicaID, sequence: UInt64, bytes: Int) {
        guard !givenUp.contains(origin) else {
            leftOut += 1
            return
        }
        held[origin, default: []].append((sequence, item, bytes))
        heldBytes[origin, default: 0] += bytes
        if held[origin]!.count > StreamReceiver.maxUnsignedRun || heldBytes[origin]! > StreamReceiver.maxUnsignedBytes { giveUp(origin) }
    }

    /// What a signature record lets go: the held events of its origin a head covers, in order.
    mutating func release(by record: SignatureRecord) -> [Item] {
        switch record {
        case .head(let signed):
            guard var waiting = held[signed.origin] else { return [] }
            let covered = waiting.prefix { $0.sequence <= signed.sequence }
            guard !covered.isEmpty else { return [] }
            waiting.removeFirst(covered.count)
            heldBytes[signed.origin]! -= covered.reduce(0) { $0 + $1.bytes }
            held[signed.origin] = waiting.isEmpty ? nil : waiting
            return covered.map(\.item)
        case .rotation(let rotation):
            if held[rotation.origin] != nil { giveUp(rotation.origin) }
            return []
        }
    }

    /// The delivery ends: what is still held is left out.
    mutating func finish() {
        leftOut += held.values.reduce(0) { $0 + $1.count }
        held.removeAll()
        heldBytes.removeAll()
    }

    private mutating func giveUp(_ origin: ReplicaID) {
        leftOut += held.removeValue(forKey: origin)?.count ?? 0
        heldBytes[origin] = nil
        givenUp.insert(origin)
    }
}
