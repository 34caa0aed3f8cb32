import Foundation
import TallyLog

/// How the last sync with one configured peer went: what a person asks "are my replicas in step?".
public struct PeerStatus: Codable, Sendable, Equatable {
    public var name: String
    /// When the last sync started and, if it failed, why: this replica's refusal (which may
    /// quote the refused value), or that the peer failed — never the peer's own error text.
    public var lastAttemptAt: String
    public var lastError: String?
    /// When a sync last succeeded, what it moved, and the version vector both replicas held
    /// after it (everything this replica had was pushed): what this replica wrote since then
    /// is what the peer still lacks, as far as this replica knows.
    public var lastSuccessAt: String?
    public var pulled: Int
    public var pushed: Int
    public var vectorAtSuccess: VersionVector?

    public init(
        name: String, lastAttemptAt: String, lastError: String? = nil, lastSuccessAt: String? = nil, pulled: Int = 0, pushed: Int = 0,
        vectorAtSuccess: VersionVector? = nil
    ) {
        (self.name, self.lastAttemptAt, self.lastError, self.lastSuccessAt) = (name, lastAttemptAt, lastError, lastSuccessAt)
        (self.pulled, self.pushed, self.vectorAtSuccess) = (pulled, pushed, vectorAtSuccess)
    }

    /// Events `current` holds that the peer did not hold at the last success (all of them if
    /// there was none).
    public func unsent(from current: VersionVector) -> UInt64 {
        current.sequences.reduce(0) { sum, entry in
            let (origin, sequence) = entry
            let held = vectorAtSuccess?[origin] ?? 0
            return sum + (sequence > held ? sequence - held : 0)
        }
    }
}

/// `DATA_DIR/peer-status.json`: the last sync with each peer, written by every sync with a
/// configured peer (the service's timer, `POST /v1/replication/sync`, `tally sync NAME`).
/// Local to this replica, never replicated; losing it loses only the history shown.
public struct PeerStatusStore: Sendable {
    let file: SecretFile<[PeerStatus]>

    public init(directory: DataDirectory) { file = SecretFile(path: directory.path + "/peer-status.json", empty: []) }

    /// Every recorded peer's status.
    public func all() throws -> [PeerStatus] { try file.read() }

    /// Replaces `name`'s status with what `change` makes of it (a fresh one if none).
    public func record(_ name: String, at now: Date = Date(), _ change: (inout PeerStatus) -> Void) throws {
        let stamp = ISO8601DateFormatter().string(from: now)
        try file.update { statuses in
            var status = statuses.first { $0.name == name } ?? PeerStatus(name: name, lastAttemptAt: stamp)
            status.lastAttemptAt = stamp
            change(&status)
            statuses.removeAll { $0.name == name }
            statuses.append(status)
            statuses.sort { $0.name < $1.name }
        }
    }
}
