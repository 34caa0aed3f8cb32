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
    public func storeBlob(_ digest: String, bytes: [UInt8], under lease: ClusterLease) async throws {
        try Self.checkDigest(digest)
        let stored = try await transaction { connection in
            try await connection.query("SELECT set_config('synchronous_commit', 'on', true)", logger: logger)
            var inserted = false
            for try await _ in try await connection.query(
                """
                INSERT INTO tally_blobs (ledger, digest, bytes)
                SELECT \(lease.ledger), \(digest), \(ByteBuffer(bytes: bytes))
                WHERE EXISTS (
                  SELECT 1 FROM tally_leases
                  WHERE ledger = \(lease.ledger) AND epoch = \(lease.epoch) AND owner = \(lease.node) AND expires_at > statement_timestamp())
                ON CONFLICT (ledger, digest) DO UPDATE SET stored_at = now()
                RETURNING 1
                """, logger: logger)
            {
                inserted = true
            }
            return inserted
        }
        guard stored else { throw ClusterRefusal.fenced(ledger: lease.ledger, epoch: lease.epoch) }
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
