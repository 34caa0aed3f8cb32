import Foundation
import TallyCore
import TallyLog
import TallyStore
import TallySync

/// Replication's entry points that need no writer: a replica's vector, a bundle exported from
/// it, its configured peers, and how it stands with them. They read the data directory (and,
/// for a bundle, the log) while a server may hold the writer lock, so they are functions of a
/// `DataDirectory`, beside the ledger's own sync, pull and push (`Ledger+Replication`).
extension Ledger {
    /// Per origin, the highest contiguous sequence the replica holds.
    public static func vector(of directory: DataDirectory) throws -> VersionVector {
        try VersionVector(of: directory)
    }

    /// Writes to `folder` the events `vector` lacks (all, without one) as a bundle.
    public static func exportBundle(_ directory: DataDirectory, to folder: String, for vector: VersionVector?) throws -> SegmentBundle.Manifest {
        try SegmentBundle.export(directory, to: folder, for: vector)
    }

    /// The configured peers (with their tokens: for syncing, never for showing).
    public static func peers(of directory: DataDirectory) throws -> [Peer] {
        try PeerStore(directory: directory).all()
    }

    /// The configured peer `name`, if there is one.
    public static func peer(named name: String, of directory: DataDirectory) throws -> Peer? {
        try peers(of: directory).first { $0.name == name }
    }

    /// Adds a peer (its URL http or https; its name not taken).
    public static func addPeer(_ peer: Peer, to directory: DataDirectory) throws {
        try PeerStore(directory: directory).add(peer)
    }

    /// Removes the peer `name`; false if there was none.
    @discardableResult
    public static func removePeer(named name: String, from directory: DataDirectory) throws -> Bool {
        try PeerStore(directory: directory).remove(name: name)
    }

    /// This replica (its log head, how far the views are behind it, events per origin) and
    /// each configured peer: its URL without credentials, the last attempt and success, and
    /// how many events written since that success it still lacks. Never a peer's token. What
    /// `GET /v1/sync/status` answers.
    public func syncStatusDocument() throws -> JSONText {
        let appended = appendedIndex
        let projected = try views.projectedIndex()
        let vector = self.vector
        let statuses = Dictionary(try PeerStatusStore(directory: directory).all().map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let peers: [JSONText] = try Self.peers(of: directory).map { peer in
            let status = statuses[peer.name]
            return .object([
                // A name may be a URL (a peer registered by `tally sync URL`): shown like one.
                ("name", .string(peer.name.contains("://") ? Peer.displayURL(peer.name) : peer.name)), ("url", .string(Peer.displayURL(peer.url))),
                ("lastAttemptAt", ViewJSON.optional(status?.lastAttemptAt)), ("lastSuccessAt", ViewJSON.optional(status?.lastSuccessAt)),
                ("lastError", ViewJSON.optional(status?.lastError)),
                ("pulled", .int(Int64(status?.pulled ?? 0))), ("pushed", .int(Int64(status?.pushed ?? 0))),
                ("unsent", .int(Int64(clamping: status.map { $0.unsent(from: vector) } ?? vector.sequences.values.reduce(0, +)))),
            ])
        }
        let origins: [JSONText] = vector.sequences.sorted { $0.key.description < $1.key.description }.map {
            .object([("origin", .string($0.key.description)), ("events", .int(Int64(clamping: $0.value)))])
        }
        return .object([
            ("replicaId", .string(directory.identity.replicaId)), ("name", .string(directory.identity.name)),
            ("appendedIndex", .int(Int64(clamping: appended))), ("projectedIndex", .int(Int64(clamping: projected))),
            ("viewsBehind", .int(Int64(clamping: appended > projected ? appended - projected : 0))),
            ("origins", .array(origins)), ("peers", .array(peers)),
            ("missingAttachments", .int(Int64(try views.missingAttachments().count))),
        ])
    }
}
