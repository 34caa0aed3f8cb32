import Logging
import NIOCore
import PostgresNIO
import TallyLog

/// Each hosted ledger's attachments (`tally_blobs`, issue 32): stored by the node that holds
/// the ledger's lease before the upload is answered, so they survive that node as its log's
/// bytes do, and read by any node that serves the ledger later and lacks one.
///
/// Stored and removed under the lease (a former owner's late call is refused, `fenced`), but
/// without locking the lease row: a blob of megabytes must not hold up the ledger's writes, and
/// a blob, named by its content, cannot conflict with another.
extension ClusterArchive {
    /// Stores the blob `digest` of the lease's ledger; one stored already is kept as it is.
    /// PostgreSQL refuses bytes that do not hash to `digest`.
    public func storeBlob(_ digest: String, bytes: ByteBuffer, under lease: ClusterLease) async throws {
        try Self.checkDigest(digest)
        let inserted = try await transaction(setsItsOwnLimits: true) { connection in
            // A transfer cut off must not keep its row locked (a retry of the same digest waits on it).
            try await connection.query(
                """
                SELECT set_config('synchronous_commit', 'on', true), set_config('statement_timeout', '60s', true),
                       set_config('idle_in_transaction_session_timeout', '60s', true)
                """, logger: logger)
            var inserted = false
            for try await _ in try await connection.query(
                """
                INSERT INTO tally_blobs (ledger, digest, bytes)
                SELECT \(lease.ledger), \(digest), \(bytes)
                WHERE EXISTS (
                  SELECT 1 FROM tally_leases
                  WHERE ledger = \(lease.ledger) AND epoch = \(lease.epoch) AND owner = \(lease.node) AND expires_at > statement_timestamp())
                ON CONFLICT (ledger, digest) DO NOTHING
                RETURNING 1
                """, logger: logger)
            {
                inserted = true
            }
            return inserted
        }
        // Nothing inserted: held already (fine, if the lease is still this node's) or fenced.
        if !inserted, try await !isHeld(lease) { throw ClusterRefusal.fenced(ledger: lease.ledger, epoch: lease.epoch) }
    }

    /// Whether the cluster holds the blob `digest` of `ledger`.
    public func holdsBlob(_ digest: String, of ledger: String) async throws -> Bool {
        try Self.checkDigest(digest)
        var held = false
        for try await _ in try await client.query("SELECT 1 FROM tally_blobs WHERE ledger = \(ledger) AND digest = \(digest)", logger: logger) {
            held = true
        }
        return held
    }

    /// Which of `digests` the cluster holds for `ledger`: one query, whatever their number.
    public func heldBlobs(_ digests: [String], of ledger: String) async throws -> Set<String> {
        for digest in digests { try Self.checkDigest(digest) }
        var held: Set<String> = []
        for try await (digest, ) in try await client.query(
            "SELECT digest FROM tally_blobs WHERE ledger = \(ledger) AND digest = ANY(\(digests))", logger: logger
        ).decode((String,).self) {
            held.insert(digest)
        }
        return held
    }

    /// The bytes of the blob `digest` of `ledger`, or nil if the cluster holds none.
    public func blob(_ digest: String, of ledger: String) async throws -> [UInt8]? {
        try Self.checkDigest(digest)
        var bytes: [UInt8]?
        for try await (stored, ) in try await client.query(
            "SELECT bytes FROM tally_blobs WHERE ledger = \(ledger) AND digest = \(digest)", logger: logger
        ).decode((ByteBuffer,).self) {
            bytes = Array(stored.readableBytesView)
        }
        return bytes
    }

    /// The blobs of `ledger` the cluster holds, with their sizes, by digest.
    public func blobs(of ledger: String) async throws -> [BlobInfo] {
        var blobs: [BlobInfo] = []
        for try await (digest, size) in try await client.query(
            "SELECT digest, length(bytes) FROM tally_blobs WHERE ledger = \(ledger) ORDER BY digest", logger: logger
        ).decode((String, Int).self) {
            blobs.append(BlobInfo(digest: digest, size: size))
        }
        return blobs
    }

    /// The bytes of every blob of `ledger` the cluster holds, summed by PostgreSQL (an upload's
    /// quota check: no row per blob comes back).
    public func blobBytes(of ledger: String) async throws -> Int {
        var total = 0
        for try await (sum, ) in try await client.query(
            "SELECT COALESCE(sum(length(bytes)), 0)::bigint FROM tally_blobs WHERE ledger = \(ledger)", logger: logger
        ).decode((Int,).self) {
            total = sum
        }
        return total
    }

    /// Deletes the blob `digest` of the lease's ledger (retention), under the lease.
    public func removeBlob(_ digest: String, under lease: ClusterLease) async throws {
        try Self.checkDigest(digest)
        try await transaction { connection in
            try await Self.lockHeld(lease, on: connection, logger: logger)
            try await connection.query("DELETE FROM tally_blobs WHERE ledger = \(lease.ledger) AND digest = \(digest)", logger: logger)
        }
    }

    /// The blobs the cluster holds, by ledger: how many, and their bytes (`tally cluster status`).
    public func blobUsage() async throws -> [String: (count: Int, bytes: Int64)] {
        var usage: [String: (count: Int, bytes: Int64)] = [:]
        for try await (ledger, count, bytes) in try await client.query(
            "SELECT ledger, count(*), coalesce(sum(length(bytes)), 0)::bigint FROM tally_blobs GROUP BY ledger", logger: logger
        ).decode((String, Int, Int64).self) {
            usage[ledger] = (count, bytes)
        }
        return usage
    }

    static func checkDigest(_ digest: String) throws {
        guard BlobStore.isDigest(digest) else { throw ClusterRefusal.invalid("'\(digest.prefix(80))' is not a blob's digest") }
    }
}
