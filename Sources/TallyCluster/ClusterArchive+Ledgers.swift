import Foundation
import Logging
import NIOCore
import PostgresNIO
import TallyLog

/// The cluster's registry of ledgers and nodes (issue 32): which ledgers exist, the small
/// files of each ledger's folder that are not its log — its identity and signing key, tokens,
/// members, sessions, invitations, quota, peers (`LedgerFiles.names`) — and where each node
/// answers, so that a request reaching any node can be served or forwarded to the ledger's owner.
///
/// A ledger's files are written by the node that holds its lease, under that lease (a former
/// owner's late write is refused as its archive would be), and read by the node that takes it
/// over, before it opens the ledger.
extension ClusterArchive {
    /// Registers a new ledger with its folder's files; refuses a name already registered.
    public func register(_ ledger: String, files: [String: [UInt8]]) async throws {
        try LedgerFiles.check(files, of: ledger)
        try await transaction { connection in
            var inserted = false
            for try await _ in try await connection.query(
                "INSERT INTO tally_ledgers (ledger) VALUES (\(ledger)) ON CONFLICT DO NOTHING RETURNING 1", logger: logger)
            {
                inserted = true
            }
            guard inserted else { throw ClusterRefusal.invalid("a ledger named '\(ledger)' exists in the cluster") }
            for (name, bytes) in files.sorted(by: { $0.key < $1.key }) {
                try await connection.query(
                    "INSERT INTO tally_ledger_files (ledger, name, bytes) VALUES (\(ledger), \(name), \(ByteBuffer(bytes: bytes)))", logger: logger)
            }
        }
    }

    /// The ledgers registered, by name.
    public func ledgers() async throws -> [String] {
        var names: [String] = []
        for try await (name, ) in try await client.query("SELECT ledger FROM tally_ledgers ORDER BY ledger", logger: logger).decode((String,).self) {
            names.append(name)
        }
        return names
    }

    /// The files of `ledger`'s folder as its owner last wrote them; nil when no such ledger is
    /// registered.
    public func files(of ledger: String) async throws -> [String: [UInt8]]? {
        try await client.withConnection { connection in
            var registered = false
            for try await _ in try await connection.query("SELECT 1 FROM tally_ledgers WHERE ledger = \(ledger)", logger: logger) { registered = true }
            guard registered else { return nil }
            var files: [String: [UInt8]] = [:]
            for try await (name, bytes) in try await connection.query(
                "SELECT name, bytes FROM tally_ledger_files WHERE ledger = \(ledger)", logger: logger
            ).decode((String, ByteBuffer).self) {
                files[name] = Array(bytes.readableBytesView)
            }
            return files
        }
    }

    /// Writes `files` (changed or new) of the lease's ledger, and removes `removed`, under the
    /// lease: refused (`fenced`) when it is no longer live and this node's. The operator's edits
    /// applied to them (`answered`: each edit's id and why it was refused, nil when made) are
    /// answered in the same transaction.
    public func store(
        _ files: [String: [UInt8]], removing removed: [String] = [], answering answered: [EditAnswer] = [], of lease: ClusterLease
    ) async throws {
        try LedgerFiles.check(files, of: lease.ledger)
        guard !files.isEmpty || !removed.isEmpty || !answered.isEmpty else { return }
        try await transaction { connection in
            try await Self.lockHeld(lease, on: connection, logger: logger)
            try await Self.write(files, removing: removed, answering: answered, of: lease.ledger, on: connection, logger: logger)
        }
    }

    /// `store`'s writes, in a transaction that holds what allows them.
    static func write(
        _ files: [String: [UInt8]], removing removed: [String], answering answered: [EditAnswer], of ledger: String,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        for (name, bytes) in files.sorted(by: { $0.key < $1.key }) {
            try await connection.query(
                """
                INSERT INTO tally_ledger_files (ledger, name, bytes) VALUES (\(ledger), \(name), \(ByteBuffer(bytes: bytes)))
                ON CONFLICT (ledger, name) DO UPDATE SET bytes = EXCLUDED.bytes, updated_at = now()
                """, logger: logger)
        }
        for name in removed {
            try await connection.query("DELETE FROM tally_ledger_files WHERE ledger = \(ledger) AND name = \(name)", logger: logger)
        }
        for answer in answered {
            try await connection.query(
                """
                UPDATE tally_file_edits SET answered_at = now(), refusal = \(answer.refusal)
                WHERE id = \(answer.id) AND ledger = \(ledger) AND answered_at IS NULL
                """, logger: logger)
        }
    }

    /// Records where this node answers (`url`), now: called when it starts and every few
    /// seconds after, so `tally cluster status` can tell a node seen lately from one gone.
    public func announce(url: String) async throws {
        try await client.query(
            """
            INSERT INTO tally_nodes (node, url, seen_at) VALUES (\(node), \(url), now())
            ON CONFLICT (node) DO UPDATE SET url = EXCLUDED.url, seen_at = EXCLUDED.seen_at
            """, logger: logger)
    }

    /// The node that holds a live lease on `ledger` and where it answers; nil when no lease on
    /// it is live (the ledger is free to take).
    public func servingNode(of ledger: String) async throws -> (node: String, url: String)? {
        var serving: (node: String, url: String)?
        for try await (node, url) in try await client.query(
            """
            SELECT l.owner, n.url FROM tally_leases l JOIN tally_nodes n ON n.node = l.owner
            WHERE l.ledger = \(ledger) AND l.expires_at > statement_timestamp()
            """, logger: logger
        ).decode((String, String).self) {
            serving = (node, url)
        }
        return serving
    }

    /// The key a node proves with what a request it forwards says of its client (the address a
    /// sign-in is counted under): 32 random bytes, made by the first node that asks and kept in
    /// PostgreSQL, so only the nodes — and whoever reads the database — hold it.
    public func forwardingKey() async throws -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let fresh = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        try await client.query(
            "INSERT INTO tally_cluster_keys (name, key) VALUES ('forwarding', \(ByteBuffer(bytes: fresh))) ON CONFLICT (name) DO NOTHING", logger: logger)
        for try await key in try await client.query("SELECT key FROM tally_cluster_keys WHERE name = 'forwarding'", logger: logger).decode(ByteBuffer.self) {
            return Array(buffer: key)
        }
        throw ClusterRefusal.invalid("the cluster's forwarding key is missing")
    }

    /// Every node, where it answers, and how many seconds ago it was last seen (`tally cluster status`).
    public func nodes() async throws -> [(node: String, url: String, secondsSinceSeen: Double)] {
        var nodes: [(node: String, url: String, secondsSinceSeen: Double)] = []
        for try await (node, url, seconds) in try await client.query(
            "SELECT node, url, extract(epoch FROM now() - seen_at)::float8 FROM tally_nodes ORDER BY node", logger: logger
        ).decode((String, String, Double).self) {
            nodes.append((node, url, seconds))
        }
        return nodes
    }

    /// The append of `ledger` in `segment` that starts before `length`, last of them: the one a
    /// node's log ending there ends in or after (`ClusterCatchUp`).
    func lastAppend(of ledger: String, in segment: String, before length: Int) async throws -> SegmentAppend? {
        var last: SegmentAppend?
        for try await (offset, bytes, next) in try await client.query(
            """
            SELECT "offset", bytes, next_segment FROM tally_appends
            WHERE ledger = \(ledger) AND segment = \(segment) AND "offset" < \(Int64(length))
            ORDER BY "offset" DESC LIMIT 1
            """, logger: logger
        ).decode((Int64, ByteBuffer, String?).self) {
            // Checked, not trusted: a row's offset out of the asked range would wrap the sums
            // the catch-up makes with it.
            guard offset >= 0, offset < Int64(length) else {
                throw ClusterRefusal.invalid("an append of '\(ledger)' at offset \(offset) of \(segment), asked for one before \(length)")
            }
            last = SegmentAppend(segment: segment, offset: Int(offset), bytes: Array(bytes.readableBytesView), nextSegment: next)
        }
        return last
    }
}

/// The files of a ledger's folder that the cluster keeps beside its log.
public enum LedgerFiles {
    /// Their paths in the folder: the identity and signing key (`DataDirectory`), the tokens,
    /// members, sessions and invitations, the quota, the peers and their status, the keys of
    /// origins the log pinned. The views, attachments and the log are not among them.
    public static let names = [
        "replica.json", "replica.key", "tokens.json", "members.json", "sessions.json", "invites.json", "quota.json", "peers.json",
        "peer-status.json", "log/origin-keys.json",
    ]

    /// The most one file may hold (they are small; a larger one is refused, not stored).
    public static let maxBytes = 16 << 20

    static func check(_ files: [String: [UInt8]], of ledger: String) throws {
        for (name, bytes) in files {
            guard names.contains(name) else { throw ClusterRefusal.invalid("'\(name)' is not one of a ledger's files (ledger '\(ledger)')") }
            guard bytes.count <= maxBytes else { throw ClusterRefusal.invalid("\(name) of ledger '\(ledger)' holds \(bytes.count) bytes") }
        }
    }

    /// The files of the ledger folder at `path` as they are now (those that exist).
    public static func read(folder path: String) -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in names {
            if let data = FileManager.default.contents(atPath: path + "/" + name) { files[name] = Array(data) }
        }
        return files
    }

    /// The files the operator's credential commands read and change: tokens, members,
    /// sessions, invitations and the quota (which bounds the members).
    public static let credentialNames = ["tokens.json", "members.json", "sessions.json", "invites.json", "quota.json"]

    /// Runs `body` on a folder of their own holding the credential files of `files`
    /// (`credentialNames`: never the ledger's signing key), removed after: for the stores that
    /// read and change them, on the files PostgreSQL holds. Returns what `body` returned and
    /// `files` with the credential files as `body` left them.
    public static func inFolderOfTheirOwn<Value>(
        _ files: [String: [UInt8]], _ body: (String) throws -> Value
    ) throws -> (value: Value, files: [String: [UInt8]]) {
        let folder = FileManager.default.temporaryDirectory.path + "/tally-ledger-files-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try write(files.filter { credentialNames.contains($0.key) }, folder: folder)
        let value = try body(folder)
        let after = read(folder: folder).filter { credentialNames.contains($0.key) }
        return (value, files.filter { !credentialNames.contains($0.key) }.merging(after) { $1 })
    }

    /// Writes `files` into the ledger folder at `path` (made, 0700, with its `log` folder, if
    /// missing), each durably and readable by its owner only; a file of the folder not among
    /// them is removed, so the folder says what the cluster says.
    public static func write(_ files: [String: [UInt8]], folder path: String) throws {
        try FileManager.default.createDirectory(atPath: path + "/log", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = chmod(path, 0o700)
        for name in names {
            let file = path + "/" + name
            if let bytes = files[name] {
                if FileManager.default.contents(atPath: file).map(Array.init) == bytes { continue }
                try writeDurably(Data(bytes), to: file, mode: 0o600)
            } else if FileManager.default.fileExists(atPath: file) {
                try FileManager.default.removeItem(atPath: file)
            }
        }
    }
}
