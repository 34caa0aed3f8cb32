import Foundation
import TallyCore
import TallyLog

/// Signs hand-made histories the way a replica signs its own: a head per origin after its
/// last event, with a key of the test's (or a fresh one), so crafted deliveries reach the
/// checks they are about instead of stopping at "unsigned".
public enum TestSigning {
    /// One signed head per origin in `records`, for its last event there, in order of first appearance.
    public static func heads(for records: [(bytes: [UInt8], event: Event)], key: ReplicaSigningKey = .generate()) -> [SignatureRecord] {
        var order: [ReplicaID] = []
        var last: [ReplicaID: ChainHead] = [:]
        for (bytes, event) in records {
            if last[event.origin] == nil { order.append(event.origin) }
            last[event.origin] = ChainHead(sequence: event.sequence, hash: EventCodec.hash(bytes))
        }
        return order.map { .head(key.sign(origin: $0, head: last[$0]!)) }
    }
}
