import Foundation
import Logging
import NIOCore
import PostgresNIO

/// The durable, shared layer of a cluster of Tally nodes (issue 32): each hosted ledger's
/// durable batches, archived in PostgreSQL in log order, and each ledger's lease — which node
/// may archive its batches, under which epoch.
///
/// PostgreSQL decides, not trust:
///
/// - **A batch is archived only under the live lease it names.** The insert reads the lease row
///   `FOR SHARE` and takes the batch only if the epoch and owner still match and the lease has
///   not expired; a former owner (paused, partitioned, its lease taken over) is refused
///   (`ClusterRefusal.fenced`), whatever its own clock says — every expiry is PostgreSQL's `now()`.
/// - **Batches follow each other.** A batch must start one past the archive's last index
///   (`notNext` otherwise), and `(ledger, first_index)` is the primary key: two writers can
///   never fork one ledger's archive.
/// - **Only a node that has caught up takes a lease.** Taking one locks the lease row `FOR
///   UPDATE` (so no archive under the old epoch is in flight) and compares the archive's last
///   index with the node's own; a node behind (started empty, restored from an old disk) or
///   ahead (holding batches it never archived, so never acknowledged) is refused
///   (`notCaughtUp`) — an empty node cannot win and replicate its emptiness (LiteFS's failure).
///   Every take of a lease increases the epoch.
///
/// Events are opaque bytes here: the node's verifier checks what it reads back, as it checks
/// any peer.
public struct ClusterArchive: Sendable {
    let client: PostgresClient
    /// This node's name, recorded as the owner of the leases it takes.
    public let node: String
    let logger: Logger

    public init(client: PostgresClient, node: String, logger: Logger) {
        (self.client, self.node, self.logger) = (client, node, logger)
    }

    /// Creates the tables if they are missing (one node at a time: an advisory lock).
    public func migrate() async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS tally_leases (
                  ledger text PRIMARY KEY,
                  epoch bigint NOT NULL CHECK (epoch >= 0),
                  owner text NOT NULL,
                  expires_at timestamptz NOT NULL
                )
                """, logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS tally_batches (
                  ledger text NOT NULL,
                  first_index bigint NOT NULL CHECK (first_index >= 1),
                  last_index bigint NOT NULL CHECK (last_index >= first_index),
                  epoch bigint NOT NULL,
                  events bytea NOT NULL,
                  last_hash bytea NOT NULL,
                  archived_at timestamptz NOT NULL DEFAULT now(),
                  PRIMARY KEY (ledger, first_index)
                )
                """, logger: logger)
            // The archive's last index is read at every archive and lease: an index-only scan
            // instead of a scan of the ledger's batches. Unique: a second guard against overlap.
            try await connection.query(
                "CREATE UNIQUE INDEX IF NOT EXISTS tally_batches_last ON tally_batches (ledger, last_index)", logger: logger)
        }
    }

    /// The advisory lock `migrate` holds (any fixed number; this one spells "tally" in ASCII).
    static let migrationLock: Int64 = 0x74_61_6c_6c_79

    /// Takes the lease of `ledger` for `duration`, this node having archived and applied
    /// everything up to `localIndex`, under a new epoch — also when this node's name held it
    /// before: a node restarted under the same name must fence the process it replaces, which
    /// may only be paused. (`renew` extends a lease without changing its epoch.)
    ///
    /// Three statements, in this order, under READ COMMITTED whatever the server's default
    /// (the hostile review reproduced each failure): the lease row locked `FOR UPDATE` first,
    /// which waits for any archive in flight (it holds the row `FOR SHARE`); then, in a new
    /// statement and so a new snapshot, the archive's last index and whether the lease is live,
    /// by the time the lock was held (`statement_timestamp()`, not the transaction's start);
    /// then the update. One `UPDATE … WHERE (SELECT max(…)) = local` kept the snapshot from
    /// before the wait and let a node take over one batch behind; REPEATABLE READ did the same.
    public func takeLease(_ ledger: String, localIndex: UInt64, for duration: Duration) async throws -> ClusterLease {
        guard !node.isEmpty else { throw ClusterRefusal.invalid("a node needs a name") }
        let local = try Self.bigint(localIndex, ledger)
        let milliseconds = Self.milliseconds(duration)
        return try await transaction { connection in
            try await connection.query("SET TRANSACTION ISOLATION LEVEL READ COMMITTED", logger: logger)
            // A stalled taker must not hold the owner's archives and renewals for long.
            try await connection.query("SET LOCAL lock_timeout = '2s'", logger: logger)
            try await connection.query(
                "INSERT INTO tally_leases (ledger, epoch, owner, expires_at) VALUES (\(ledger), 0, '', '-infinity') ON CONFLICT DO NOTHING",
                logger: logger)
            try await connection.query("SELECT 1 FROM tally_leases WHERE ledger = \(ledger) FOR UPDATE", logger: logger)
            var current: (owner: String, live: Bool, archived: Int64)?
            for try await row in try await connection.query(
                """
                SELECT owner, expires_at > statement_timestamp(),
                       (SELECT coalesce(max(last_index), 0)::bigint FROM tally_batches WHERE ledger = \(ledger))
                FROM tally_leases WHERE ledger = \(ledger)
                """, logger: logger
            ).decode((String, Bool, Int64).self) {
                current = row
            }
            guard let current else { throw ClusterRefusal.invalid("the lease of ledger '\(ledger)' vanished while taken") }
            if current.live && current.owner != node { throw ClusterRefusal.leaseHeld(ledger: ledger, owner: current.owner) }
            guard current.archived == local else {
                throw ClusterRefusal.notCaughtUp(ledger: ledger, archived: UInt64(current.archived), local: localIndex)
            }
            var epoch: Int64?
            for try await (taken, ) in try await connection.query(
                """
                UPDATE tally_leases
                SET epoch = epoch + 1, owner = \(node), expires_at = statement_timestamp() + \(milliseconds) * interval '1 millisecond'
                WHERE ledger = \(ledger) RETURNING epoch
                """, logger: logger
            ).decode((Int64,).self) {
                epoch = taken
            }
            guard let epoch else { throw ClusterRefusal.invalid("the lease of ledger '\(ledger)' vanished while taken") }
            return ClusterLease(ledger: ledger, node: node, epoch: epoch)
        }
    }

    /// Extends `lease` by `duration` from now, if nobody has taken it since (an expired lease
    /// nobody took is still this node's: no other node can have archived under it).
    public func renew(_ lease: ClusterLease, for duration: Duration) async throws {
        let milliseconds = Self.milliseconds(duration)
        let rows = try await client.query(
            """
            UPDATE tally_leases SET expires_at = now() + \(milliseconds) * interval '1 millisecond'
            WHERE ledger = \(lease.ledger) AND epoch = \(lease.epoch) AND owner = \(lease.node) RETURNING epoch
            """, logger: logger)
        var renewed = false
        for try await _ in rows { renewed = true }
        guard renewed else { throw ClusterRefusal.fenced(ledger: lease.ledger, epoch: lease.epoch) }
    }

    /// Gives `lease` up at once (a node drained before it stops), so another node need not
    /// wait for it to expire. A lease taken over meanwhile is left alone.
    public func release(_ lease: ClusterLease) async throws {
        try await client.query(
            """
            UPDATE tally_leases SET expires_at = '-infinity'
            WHERE ledger = \(lease.ledger) AND epoch = \(lease.epoch) AND owner = \(lease.node)
            """, logger: logger)
    }

    /// Archives one durable batch of the lease's ledger: log indexes `first...last`, its events
    /// and the hash of its last event. Committed (PostgreSQL's `synchronous_commit` decides how
    /// durably) when this returns; refused, with nothing written, when the lease is no longer
    /// live and this node's (`fenced`) or the batch does not follow the archive (`notNext`).
    public func archive(first: UInt64, last: UInt64, events: [UInt8], lastHash: [UInt8], under lease: ClusterLease) async throws {
        guard first >= 1, last >= first else { throw ClusterRefusal.invalid("a batch of log indexes \(first)...\(last) of ledger '\(lease.ledger)'") }
        let (firstIndex, batchLast) = (try Self.bigint(first, lease.ledger), try Self.bigint(last, lease.ledger))
        let (eventBytes, hashBytes) = (ByteBuffer(bytes: events), ByteBuffer(bytes: lastHash))
        var archived = false
        do {
            for try await _ in try await client.query(
                """
                WITH lease AS (
                  SELECT epoch FROM tally_leases
                  WHERE ledger = \(lease.ledger) AND epoch = \(lease.epoch) AND owner = \(lease.node) AND expires_at > now()
                  FOR SHARE
                )
                INSERT INTO tally_batches (ledger, first_index, last_index, epoch, events, last_hash)
                SELECT \(lease.ledger), \(firstIndex), \(batchLast), lease.epoch, \(eventBytes), \(hashBytes) FROM lease
                WHERE \(firstIndex) = 1 + coalesce((SELECT max(last_index) FROM tally_batches WHERE ledger = \(lease.ledger)), 0)
                RETURNING first_index
                """, logger: logger)
            {
                archived = true
            }
        } catch let error as PSQLError where ["23505", "40001"].contains(error.serverInfo?[.sqlState]) {
            // A batch at that index already (another writer got there first), or a
            // serialization failure under a stricter isolation than READ COMMITTED: refused.
            archived = false
        }
        guard !archived else { return }
        // The same batch archived already under the same lease: a retry of an archive whose
        // answer was lost after its commit, which succeeded.
        var same = false
        for try await _ in try await client.query(
            """
            SELECT 1 FROM tally_batches WHERE ledger = \(lease.ledger) AND first_index = \(firstIndex) AND last_index = \(batchLast)
              AND epoch = \(lease.epoch) AND last_hash = \(hashBytes) AND events = \(eventBytes)
            """, logger: logger)
        {
            same = true
        }
        guard !same else { return }
        // Why not, for the error (read after the refusal: what it says may have moved since).
        let held = try await isHeld(lease)
        guard held else { throw ClusterRefusal.fenced(ledger: lease.ledger, epoch: lease.epoch) }
        throw ClusterRefusal.notNext(ledger: lease.ledger, expected: try await lastIndex(of: lease.ledger) + 1, got: first)
    }

    /// Whether `lease` is live and still this node's.
    public func isHeld(_ lease: ClusterLease) async throws -> Bool {
        var held = false
        for try await _ in try await client.query(
            "SELECT 1 FROM tally_leases WHERE ledger = \(lease.ledger) AND epoch = \(lease.epoch) AND owner = \(lease.node) AND expires_at > now()",
            logger: logger)
        {
            held = true
        }
        return held
    }

    /// The last log index archived for `ledger` (0: none).
    public func lastIndex(of ledger: String) async throws -> UInt64 {
        try await client.withConnection { connection in UInt64(try await Self.lastIndex(of: ledger, on: connection, logger: logger)) }
    }

    /// The batches of `ledger` after log index `index`, in order, at most `limit`: what a node
    /// that has applied up to `index` applies next.
    public func batches(of ledger: String, after index: UInt64, limit: Int = 1_000) async throws -> [ArchivedBatch] {
        let after = try Self.bigint(index, ledger)
        var batches: [ArchivedBatch] = []
        for try await (first, last, epoch, events, hash) in try await client.query(
            """
            SELECT first_index, last_index, epoch, events, last_hash FROM tally_batches
            WHERE ledger = \(ledger) AND last_index > \(after) ORDER BY last_index LIMIT \(limit)
            """, logger: logger
        ).decode((Int64, Int64, Int64, ByteBuffer, ByteBuffer).self) {
            batches.append(
                ArchivedBatch(
                    firstIndex: UInt64(first), lastIndex: UInt64(last), epoch: epoch, events: Array(events.readableBytesView),
                    lastHash: Array(hash.readableBytesView)))
        }
        return batches
    }

    /// Who holds each ledger's lease, and until when, by PostgreSQL's clock (`tally cluster status`).
    public func leases() async throws -> [(ledger: String, owner: String, epoch: Int64, live: Bool)] {
        var leases: [(ledger: String, owner: String, epoch: Int64, live: Bool)] = []
        for try await (ledger, owner, epoch, live) in try await client.query(
            "SELECT ledger, owner, epoch, expires_at > now() FROM tally_leases ORDER BY ledger", logger: logger
        ).decode((String, String, Int64, Bool).self) {
            leases.append((ledger, owner, epoch, live))
        }
        return leases
    }

    /// Runs `body` in one transaction, rolled back if it throws; a refusal it throws is thrown
    /// as it is (PostgresNIO wraps it).
    private func transaction<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        do {
            return try await client.withTransaction(logger: logger) { connection in try await body(connection) }
        } catch let error as PostgresTransactionError {
            if let refusal = error.closureError as? ClusterRefusal { throw refusal }
            throw error
        }
    }

    private static func lastIndex(of ledger: String, on connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        var last: Int64 = 0
        for try await (value, ) in try await connection.query(
            "SELECT coalesce(max(last_index), 0)::bigint FROM tally_batches WHERE ledger = \(ledger)", logger: logger
        ).decode((Int64,).self) {
            last = value
        }
        return last
    }

    /// A log index of `ledger` as PostgreSQL's bigint (indexes past 2⁶³ − 1 cannot be archived).
    static func bigint(_ index: UInt64, _ ledger: String) throws -> Int64 {
        guard let value = Int64(exactly: index) else { throw ClusterRefusal.invalid("log index \(index) of ledger '\(ledger)' is past what PostgreSQL holds") }
        return value
    }

    /// A lease's length in whole milliseconds, from 1 ms to a day.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let day: Int64 = 86_400_000
        let (seconds, attoseconds) = duration.components
        guard seconds < day / 1_000 else { return day }
        return min(day, max(1, seconds * 1_000 + attoseconds / 1_000_000_000_000_000))
    }
}

/// One ledger's lease: the node that may archive its batches, and the epoch they carry.
public struct ClusterLease: Sendable, Equatable {
    public let ledger: String
    public let node: String
    public let epoch: Int64

    public init(ledger: String, node: String, epoch: Int64) { (self.ledger, self.node, self.epoch) = (ledger, node, epoch) }
}

/// A batch as archived: log indexes `firstIndex...lastIndex`, its events as the node's log
/// encodes them, the hash of its last event, and the epoch of the lease it was written under.
public struct ArchivedBatch: Sendable, Equatable {
    public let firstIndex: UInt64
    public let lastIndex: UInt64
    public let epoch: Int64
    public let events: [UInt8]
    public let lastHash: [UInt8]
}

/// What PostgreSQL refused, and why.
public enum ClusterRefusal: Error, Equatable, CustomStringConvertible {
    /// Another node holds a live lease on the ledger.
    case leaseHeld(ledger: String, owner: String)
    /// This node's log does not end where the archive does: behind (it must catch up first) or
    /// ahead (it holds batches never archived, so never acknowledged).
    case notCaughtUp(ledger: String, archived: UInt64, local: UInt64)
    /// The lease named is no longer live and this node's: another node took the ledger over, or
    /// it expired (renew it first).
    case fenced(ledger: String, epoch: Int64)
    /// The batch does not start one past the archive's last index.
    case notNext(ledger: String, expected: UInt64, got: UInt64)
    /// What was asked cannot be (an empty range of indexes, an index past a bigint, a node
    /// with no name).
    case invalid(String)

    public var description: String {
        switch self {
        case .leaseHeld(let ledger, let owner): "ledger '\(ledger)' is served by node '\(owner)', whose lease has not expired"
        case .notCaughtUp(let ledger, let archived, let local):
            local < archived
                ? "this node holds ledger '\(ledger)' up to index \(local) and the archive up to \(archived): it must catch up before it serves it"
                : "this node holds ledger '\(ledger)' up to index \(local), past the archive's \(archived): its events past \(archived) were never archived, so never acknowledged"
        case .fenced(let ledger, let epoch): "the lease of ledger '\(ledger)' under epoch \(epoch) is no longer this node's, or has expired"
        case .notNext(let ledger, let expected, let got):
            "a batch of ledger '\(ledger)' starting at index \(got) does not follow the archive (next: \(expected))"
        case .invalid(let what): "refused: \(what)"
        }
    }
}
