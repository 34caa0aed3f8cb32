import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization
import TallyLog

/// The durable, shared layer of a cluster of Tally nodes (issue 32): every byte of each hosted
/// ledger's log, archived in PostgreSQL in log order as the writer hands it over
/// (`SegmentAppend`: the frames as stored, with their segment and offset), and each ledger's
/// lease — which node may archive, under which epoch.
///
/// PostgreSQL decides, not trust:
///
/// - **Appends are archived only under the live lease they name.** The archiving transaction
///   locks the lease row (`FOR NO KEY UPDATE`: one archive at a time per ledger) and goes on only if the epoch and owner still match and the
///   lease has not expired; a former owner (paused, partitioned, its lease taken over, or
///   replaced by a process restarted under its name) is refused (`ClusterRefusal.fenced`),
///   whatever its own clock says — every expiry is PostgreSQL's clock.
/// - **Appends follow each other.** Each must start where the archive ends — in the same
///   segment right after its last bytes, or at the header's end of the segment the last seal
///   named (`notNext` otherwise); segment names compare bytewise (`COLLATE "C"`: in a Danish
///   collation "aa" sorts as "å") — and `(ledger, segment, offset)` is the primary
///   key: two writers can never fork one ledger's archive.
/// - **Only a node that has caught up takes a lease.** Taking one locks the lease row `FOR
///   UPDATE` (so no archive under the old epoch is in flight) and compares where the archive
///   ends with where the node's log ends (`LogEnd`); a node behind (started empty, restored
///   from an old disk) or ahead (holding bytes it never archived, so never acknowledged) is
///   refused (`notCaughtUp`) — an empty node cannot win and serve its emptiness (LiteFS's
///   failure). Every take of a lease increases the epoch.
///
/// The bytes are opaque here: a node replays them (`SegmentAppend.replay`) and reads them
/// through the verifier, as it reads any peer's.
public struct ClusterArchive: Sendable {
    /// The connections to PostgreSQL (run by the caller: `PostgresClient.run`).
    public let client: PostgresClient
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
                CREATE TABLE IF NOT EXISTS tally_appends (
                  ledger text NOT NULL,
                  segment text COLLATE "C" NOT NULL,
                  "offset" bigint NOT NULL CHECK ("offset" >= \(unescaped: String(SegmentFormat.fileHeaderSize))),
                  bytes bytea NOT NULL CHECK (length(bytes) > 0),
                  next_segment text COLLATE "C",
                  epoch bigint NOT NULL,
                  archived_at timestamptz NOT NULL DEFAULT now(),
                  PRIMARY KEY (ledger, segment, "offset")
                )
                """, logger: logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS tally_ledgers (ledger text PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now())", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS tally_ledger_files (
                  ledger text NOT NULL REFERENCES tally_ledgers ON DELETE CASCADE,
                  name text NOT NULL,
                  bytes bytea NOT NULL,
                  updated_at timestamptz NOT NULL DEFAULT now(),
                  PRIMARY KEY (ledger, name)
                )
                """, logger: logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS tally_nodes (node text PRIMARY KEY, url text NOT NULL, seen_at timestamptz NOT NULL)", logger: logger)
            // Keys the nodes share (`forwardingKey`).
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS tally_cluster_keys (name text PRIMARY KEY, key bytea NOT NULL CHECK (length(key) = 32))", logger: logger)
            // The operator's edits of a ledger's files (`ClusterArchive+Edits`): answered by
            // the node that serves the ledger, or by the CLI when none does.
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS tally_file_edits (
                  id bigserial PRIMARY KEY,
                  ledger text NOT NULL REFERENCES tally_ledgers ON DELETE CASCADE,
                  edit bytea NOT NULL,
                  made_at timestamptz NOT NULL DEFAULT now(),
                  answered_at timestamptz,
                  refusal text
                )
                """, logger: logger)
            try await connection.query(
                "CREATE INDEX IF NOT EXISTS tally_file_edits_pending ON tally_file_edits (ledger, id) WHERE answered_at IS NULL", logger: logger)
            // A blob's name is its SHA-256: PostgreSQL refuses bytes that do not hash to it.
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS tally_blobs (
                  ledger text NOT NULL REFERENCES tally_ledgers ON DELETE CASCADE,
                  digest text COLLATE "C" NOT NULL CHECK (digest = encode(sha256(bytes), 'hex')),
                  bytes bytea NOT NULL,
                  stored_at timestamptz NOT NULL DEFAULT now(),
                  PRIMARY KEY (ledger, digest)
                )
                """, logger: logger)
        }
    }

    /// The advisory lock `migrate` holds (any fixed number; this one spells "tally" in ASCII).
    static let migrationLock: Int64 = 0x74_61_6c_6c_79

    /// Takes the lease of `ledger` for `duration`, this node's log of it ending at `localEnd`
    /// (nil: no byte yet), under a new epoch — also when this node's name held it before: a node
    /// restarted under the same name must fence the process it replaces, which may only be
    /// paused. (`renew` extends a lease without changing its epoch.)
    ///
    /// Three statements, in this order, under READ COMMITTED whatever the server's default (a
    /// hostile review reproduced each failure): the lease row locked `FOR UPDATE` first, which
    /// waits for any archive in flight (it holds the row locked); then, in a new statement
    /// and so a new snapshot, where the archive ends and whether the lease is live by the time
    /// the lock was held (`statement_timestamp()`, not the transaction's start); then the update.
    /// One `UPDATE … WHERE (SELECT …)` kept the snapshot from before the wait and let a node take
    /// over one batch behind; REPEATABLE READ did the same.
    public func takeLease(_ ledger: String, localEnd: LogEnd?, for duration: Duration) async throws -> ClusterLease {
        guard !node.isEmpty else { throw ClusterRefusal.invalid("a node needs a name") }
        let milliseconds = Self.milliseconds(duration)
        return try await transaction { connection in
            // A stalled taker must not hold the owner's archives and renewals for long.
            try await connection.query("SET LOCAL lock_timeout = '2s'", logger: logger)
            try await connection.query(
                "INSERT INTO tally_leases (ledger, epoch, owner, expires_at) VALUES (\(ledger), 0, '', '-infinity') ON CONFLICT DO NOTHING",
                logger: logger)
            try await connection.query("SELECT 1 FROM tally_leases WHERE ledger = \(ledger) FOR UPDATE", logger: logger)
            var current: (owner: String, live: Bool)?
            for try await row in try await connection.query(
                "SELECT owner, expires_at > statement_timestamp() FROM tally_leases WHERE ledger = \(ledger)", logger: logger
            ).decode((String, Bool).self) {
                current = row
            }
            guard let current else { throw ClusterRefusal.invalid("the lease of ledger '\(ledger)' vanished while taken") }
            if current.live && current.owner != node { throw ClusterRefusal.leaseHeld(ledger: ledger, owner: current.owner) }
            let archived = try await Self.end(of: ledger, on: connection, logger: logger)
            guard archived == localEnd else { throw ClusterRefusal.notCaughtUp(ledger: ledger, archived: archived, local: localEnd) }
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
    /// nobody took is still this node's: no other node can have archived under it, and the CLI's
    /// edit of a ledger nobody serves moves its epoch on) and this node has not given it up
    /// (`release`). Returns whether operator's edits of the ledger wait to be applied
    /// (`pendingEdits`), asked in the same statement. Throws `fenced` otherwise. Waits for the
    /// lease row while another transaction holds it (a write of the ledger, a takeover).
    @discardableResult
    public func renew(_ lease: ClusterLease, for duration: Duration) async throws -> Bool {
        let milliseconds = Self.milliseconds(duration)
        let rows = try await client.query(
            """
            UPDATE tally_leases SET expires_at = statement_timestamp() + \(milliseconds) * interval '1 millisecond'
            WHERE ledger = \(lease.ledger) AND epoch = \(lease.epoch) AND owner = \(lease.node) AND expires_at <> '-infinity'
            RETURNING EXISTS (SELECT 1 FROM tally_file_edits e WHERE e.ledger = tally_leases.ledger AND e.answered_at IS NULL)
            """, logger: logger)
        var renewed: Bool?
        for try await (editsWait, ) in rows.decode((Bool,).self) { renewed = editsWait }
        guard let renewed else { throw ClusterRefusal.fenced(ledger: lease.ledger, epoch: lease.epoch) }
        return renewed
    }

    /// Renews, in one statement, those of `leases` (at most `renewalsPerStatement`) that
    /// `renew(_:for:)` would, and whose rows no other transaction holds locked right now: a node
    /// renews every lease it keeps at once (`LeaseRenewals`), so its renewals cost a transaction
    /// a round, not one per open ledger. Returns, for each lease renewed, whether edits of its
    /// ledger wait. A lease missing from the answer was taken by another node, given up, or
    /// its row was locked (a write of its ledger under way, a takeover): `renew(_:for:)`, which
    /// waits for the row, tells which — so one row held locked holds up no other lease's renewal.
    ///
    /// The rows are locked in the order of their names, so two nodes that renew some of the same
    /// rows (each for a moment after a takeover) never wait for each other in a cycle; a row
    /// changed between the statement's snapshot and its lock is looked at again, and left out
    /// once another node has taken it.
    public func renewUnlocked(_ leases: [ClusterLease], for duration: Duration) async throws -> [ClusterLease: Bool] {
        guard leases.count <= Self.renewalsPerStatement else { throw ClusterRefusal.invalid("more than \(Self.renewalsPerStatement) leases in one renewal") }
        let milliseconds = Self.milliseconds(duration)
        let (ledgers, epochs, owners) = (leases.map(\.ledger), leases.map(\.epoch), leases.map(\.node))
        return try await transaction { connection in
            var renewed: [ClusterLease: Bool] = [:]
            let rows = try await connection.query(
                """
                WITH mine AS (
                  SELECT l.ledger FROM tally_leases l
                  JOIN unnest(\(ledgers)::text[], \(epochs)::int8[], \(owners)::text[]) AS asked(ledger, epoch, owner)
                    ON l.ledger = asked.ledger AND l.epoch = asked.epoch AND l.owner = asked.owner AND l.expires_at <> '-infinity'
                  ORDER BY l.ledger
                  FOR NO KEY UPDATE OF l SKIP LOCKED
                )
                UPDATE tally_leases SET expires_at = statement_timestamp() + \(milliseconds) * interval '1 millisecond'
                FROM mine WHERE tally_leases.ledger = mine.ledger
                RETURNING tally_leases.ledger, tally_leases.epoch, tally_leases.owner,
                  EXISTS (SELECT 1 FROM tally_file_edits e WHERE e.ledger = tally_leases.ledger AND e.answered_at IS NULL)
                """, logger: logger)
            for try await (ledger, epoch, owner, editsWait) in rows.decode((String, Int64, String, Bool).self) {
                renewed[ClusterLease(ledger: ledger, node: owner, epoch: epoch)] = editsWait
            }
            return renewed
        }
    }

    /// The most leases `renewUnlocked` extends in one statement.
    public static let renewalsPerStatement = 1_000

    /// Gives `lease` up at once (a node drained before it stops), so another node need not
    /// wait for it to expire. A lease taken over meanwhile is left alone.
    public func release(_ lease: ClusterLease) async throws {
        try await client.query(
            """
            UPDATE tally_leases SET expires_at = '-infinity'
            WHERE ledger = \(lease.ledger) AND epoch = \(lease.epoch) AND owner = \(lease.node)
            """, logger: logger)
    }

    /// Archives one write of the lease's ledger — its appends, in order, all or none.
    /// Committed (PostgreSQL's `synchronous_commit` decides how durably) when this returns;
    /// refused with nothing archived when the lease is no longer live and this node's (`fenced`)
    /// or an append does not follow the archive (`notNext`). A retry of a write already
    /// archived under the same lease (its answer lost after the commit) succeeds.
    ///
    /// Appends that follow each other in one segment are archived as one (a write's events
    /// frame and its signature frame: replayed, the same bytes). A write that is then one append
    /// — nearly all — is one statement, one round trip, which locks the lease row, checks it and
    /// inserts (`InsertAppend`); a write across a seal is a transaction of one statement per append.
    public func archive(_ appends: [SegmentAppend], under lease: ClusterLease) async throws {
        guard !appends.isEmpty else { return }
        for append in appends { try Self.check(append, of: lease.ledger) }
        let appends = Self.coalesced(appends)
        do {
            if appends.count == 1 {
                do {
                    guard try await insert(appends[0], under: lease) else {
                        guard try await isHeld(lease) else { throw ClusterRefusal.fenced(ledger: lease.ledger, epoch: lease.epoch) }
                        throw ClusterRefusal.notNext(ledger: lease.ledger, expected: try await end(of: lease.ledger), got: appends[0])
                    }
                    return
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == "40001" {
                    // A server whose default isolation is stricter than READ COMMITTED refused the
                    // lock (this node's own renewal committed meanwhile): once more, in a
                    // transaction under READ COMMITTED. Nothing of the statement was kept.
                }
            }
            try await transaction(setsItsOwnLimits: true) { connection in
                try await Self.lockHeld(lease, on: connection, logger: logger)
                for append in appends {
                    var inserted = false
                    for try await _ in try await connection.query(try InsertAppend(append, lease).asQuery(), logger: logger) { inserted = true }
                    guard inserted else {
                        throw ClusterRefusal.notNext(
                            ledger: lease.ledger, expected: try await Self.end(of: lease.ledger, on: connection, logger: logger), got: append)
                    }
                }
            }
        } catch let refusal as ClusterRefusal {
            if case .notNext = refusal {
                if try await isArchived(appends, under: lease) { return }
                // An insert after the lock finds the lease expired by its own statement's time.
                guard try await isHeld(lease) else { throw ClusterRefusal.fenced(ledger: lease.ledger, epoch: lease.epoch) }
            }
            throw refusal
        } catch let error as PSQLError where ["23505", "40001"].contains(error.serverInfo?[.sqlState]) {
            // An append at that position already (another writer got there first), or a
            // serialization failure under a stricter isolation than READ COMMITTED: refused.
            if try await isArchived(appends, under: lease) { return }
            guard try await isHeld(lease) else { throw ClusterRefusal.fenced(ledger: lease.ledger, epoch: lease.epoch) }
            throw ClusterRefusal.notNext(ledger: lease.ledger, expected: try await end(of: lease.ledger), got: appends[0])
        }
    }

    /// Runs `InsertAppend` for `append` on a connection of the pool: whether it inserted. A
    /// statement PostgreSQL refused for the write's sake (a serialization failure, the place
    /// taken) is thrown; any other failure is tried once more as a plain query. PostgresNIO
    /// remembers a prepare that failed on a connection (cancelled, timed out, or waiting on a
    /// lock held through its parse) and fails that statement on that connection from then on,
    /// without asking the server: the plain query still works there. (A write retried after a
    /// commit whose answer was lost is recognised by the caller, as any retry is.)
    private func insert(_ append: SegmentAppend, under lease: ClusterLease) async throws -> Bool {
        var inserted = false
        do {
            for try await _ in try await client.execute(InsertAppend(append, lease), logger: logger) { inserted = true }
        } catch let error as PSQLError where ["40001", "23505"].contains(error.serverInfo?[.sqlState]) {
            throw error
        } catch {
            logger.debug("the prepared insert failed; once more as a plain query", metadata: ["error": "\(error)"])
            for try await _ in try await client.query(try InsertAppend(append, lease).asQuery(), logger: logger) { inserted = true }
        }
        return inserted
    }

    /// Sets up a write under `lease` in the transaction of `connection`, in one statement (one
    /// round trip: every write of every hosted ledger pays it): committed with
    /// `synchronous_commit = on` whatever the server's default, its later statements timing out
    /// in 10 s (a node cut off mid-write must not hold the lease row for hours), the lease row
    /// locked `FOR NO KEY UPDATE` — one write at a time per ledger, and a takeover (`FOR
    /// UPDATE`) waits for it — and refused (`fenced`) unless the lease is live and still this node's.
    static func lockHeld(_ lease: ClusterLease, on connection: PostgresConnection, logger: Logger) async throws {
        var held = false
        for try await _ in try await connection.query(
            """
            SELECT set_config('synchronous_commit', 'on', true), set_config('statement_timeout', '10s', true),
                   set_config('idle_in_transaction_session_timeout', '10s', true)
            FROM tally_leases
            WHERE ledger = \(lease.ledger) AND epoch = \(lease.epoch) AND owner = \(lease.node) AND expires_at > statement_timestamp()
            FOR NO KEY UPDATE
            """, logger: logger)
        {
            held = true
        }
        guard held else { throw ClusterRefusal.fenced(ledger: lease.ledger, epoch: lease.epoch) }
    }

    /// The insert of `append`, if the lease is live and this node's and it starts where the
    /// archive ends: the archive is empty and it starts the first segment, or it goes on the
    /// last segment, or that one is sealed and it starts a later one. One statement: it locks
    /// the lease row `FOR NO KEY UPDATE` (as `lockHeld`: a takeover waits for it, and after
    /// waiting for a takeover it reads the row as the takeover left it, so an old epoch finds
    /// none) and commits with `synchronous_commit = on` whatever the server's default. Within a
    /// transaction that holds the lock already (`lockHeld`), the check finds the row again.
    ///
    /// Prepared once per connection (every write of every hosted ledger runs it: parsing and
    /// planning it each time was about 8 % of the cluster's CPU under load). A pooler in front of
    /// PostgreSQL must keep prepared statements per server connection (PgBouncer ≥ 1.21 does,
    /// with `max_prepared_statements`; docs/OPERATIONS.md).
    struct InsertAppend: PostgresPreparedStatement {
        typealias Row = Int32
        static let sql = """
            WITH held AS (
              SELECT set_config('synchronous_commit', 'on', true) FROM tally_leases
              WHERE ledger = $1 AND epoch = $2 AND owner = $3 AND expires_at > statement_timestamp()
              FOR NO KEY UPDATE
            ), last AS (
              SELECT segment, "offset" + length(bytes) AS ending, next_segment FROM tally_appends
              WHERE ledger = $1 ORDER BY segment DESC, "offset" DESC LIMIT 1
            )
            INSERT INTO tally_appends (ledger, segment, "offset", bytes, next_segment, epoch)
            SELECT $1, $4, $5, $6, $7, $2
            WHERE EXISTS (SELECT 1 FROM held) AND (
               (NOT EXISTS (SELECT 1 FROM last) AND $4 = '\(SegmentFormat.fileName(firstIndex: 1))' AND $5 = \(SegmentFormat.fileHeaderSize))
               OR EXISTS (
                 SELECT 1 FROM last
                 WHERE (last.next_segment IS NULL AND last.segment = $4 AND last.ending = $5)
                    OR (last.next_segment = $4 AND $5 = \(SegmentFormat.fileHeaderSize))))
            RETURNING 1
            """
        static let bindingDataTypes: [PostgresDataType] = [.text, .int8, .text, .text, .int8, .bytea, .text]
        let append: SegmentAppend
        let lease: ClusterLease

        init(_ append: SegmentAppend, _ lease: ClusterLease) { (self.append, self.lease) = (append, lease) }

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 7)
            bindings.append(lease.ledger)
            bindings.append(lease.epoch)
            bindings.append(lease.node)
            bindings.append(append.segment)
            bindings.append(Int64(append.offset))
            bindings.append(ByteBuffer(bytes: append.bytes))
            bindings.append(append.nextSegment)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Int32 { try row.decode(Int32.self) }

        /// The same statement as a plain query, parsed and planned where it runs: within a
        /// transaction (an error there ends it, so nothing can be tried again), and after the
        /// prepared one failed on a connection.
        func asQuery() throws -> PostgresQuery { PostgresQuery(unsafeSQL: Self.sql, binds: try makeBindings()) }
    }

    /// `appends` with each run that follows on in one segment (no seal before its end) made
    /// one append: the same bytes at the same place.
    static func coalesced(_ appends: [SegmentAppend]) -> [SegmentAppend] {
        var merged: [SegmentAppend] = []
        for append in appends {
            if let last = merged.last, !last.seals, last.segment == append.segment, last.offset + last.bytes.count == append.offset {
                merged[merged.count - 1] = SegmentAppend(
                    segment: last.segment, offset: last.offset, bytes: last.bytes + append.bytes, nextSegment: append.nextSegment)
            } else {
                merged.append(append)
            }
        }
        return merged
    }

    /// Whether every one of `appends` is archived as it is, under `lease`'s epoch.
    private func isArchived(_ appends: [SegmentAppend], under lease: ClusterLease) async throws -> Bool {
        for append in appends {
            var same = false
            for try await _ in try await client.query(
                """
                SELECT 1 FROM tally_appends
                WHERE ledger = \(lease.ledger) AND segment = \(append.segment) AND "offset" = \(Int64(append.offset))
                  AND epoch = \(lease.epoch) AND next_segment IS NOT DISTINCT FROM \(append.nextSegment) AND bytes = \(ByteBuffer(bytes: append.bytes))
                """, logger: logger)
            {
                same = true
            }
            guard same else { return false }
        }
        return true
    }

    /// Whether `lease` is live and still this node's.
    public func isHeld(_ lease: ClusterLease) async throws -> Bool {
        var held = false
        for try await _ in try await client.query(
            """
            SELECT 1 FROM tally_leases
            WHERE ledger = \(lease.ledger) AND epoch = \(lease.epoch) AND owner = \(lease.node) AND expires_at > statement_timestamp()
            """, logger: logger)
        {
            held = true
        }
        return held
    }

    /// Where the archive of `ledger` ends (nil: nothing archived).
    public func end(of ledger: String) async throws -> LogEnd? {
        try await client.withConnection { connection in try await Self.end(of: ledger, on: connection, logger: logger) }
    }

    /// The appends of `ledger` past `end` (nil: all), in log order, at most `limit`: what a node
    /// whose log ends there replays next (`SegmentAppend.replay`).
    public func appends(of ledger: String, after end: LogEnd?, limit: Int = 1_000) async throws -> [ArchivedAppend] {
        let (segment, length, sealed) = (end?.segment ?? "", Int64(end?.length ?? 0), end?.sealed ?? true)
        var appends: [ArchivedAppend] = []
        for try await (name, offset, bytes, next, epoch) in try await client.query(
            """
            SELECT segment, "offset", bytes, next_segment, epoch FROM tally_appends
            WHERE ledger = \(ledger) AND (segment > \(segment) OR (NOT \(sealed) AND segment = \(segment) AND "offset" >= \(length)))
            ORDER BY segment, "offset" LIMIT \(limit)
            """, logger: logger
        ).decode((String, Int64, ByteBuffer, String?, Int64).self) {
            appends.append(
                ArchivedAppend(
                    append: SegmentAppend(segment: name, offset: Int(offset), bytes: Array(bytes.readableBytesView), nextSegment: next), epoch: epoch))
        }
        return appends
    }

    /// Who holds each ledger's lease, whether it is live and in how many seconds it expires
    /// (negative: expired that long ago; a lease never taken, or a time set by hand to
    /// ±infinity, -1e9 — a finite number the status can print), by PostgreSQL's clock
    /// (`tally cluster status`).
    public func leases() async throws -> [(ledger: String, owner: String, epoch: Int64, live: Bool, expiresIn: Double)] {
        var leases: [(ledger: String, owner: String, epoch: Int64, live: Bool, expiresIn: Double)] = []
        for try await (ledger, owner, epoch, live, expiresIn) in try await client.query(
            """
            SELECT ledger, owner, epoch, expires_at > statement_timestamp(),
                   CASE WHEN isfinite(expires_at) THEN extract(epoch FROM expires_at - statement_timestamp())::float8 ELSE -1e9 END
            FROM tally_leases ORDER BY ledger
            """, logger: logger
        ).decode((String, String, Int64, Bool, Double).self) {
            leases.append((ledger, owner, epoch, live, expiresIn))
        }
        return leases
    }

    /// Each ledger's archived log: its bytes, and how many seconds ago its last write was
    /// archived (`tally cluster status`).
    public func archiveUsage() async throws -> [String: (bytes: Int64, secondsSinceWrite: Double)] {
        var usage: [String: (bytes: Int64, secondsSinceWrite: Double)] = [:]
        for try await (ledger, bytes, seconds) in try await client.query(
            """
            SELECT ledger, sum(length(bytes))::bigint, extract(epoch FROM statement_timestamp() - max(archived_at))::float8
            FROM tally_appends GROUP BY ledger
            """, logger: logger
        ).decode((String, Int64, Double).self) {
            usage[ledger] = (bytes, seconds)
        }
        return usage
    }

    /// Runs `body` in one transaction under READ COMMITTED whatever the server's default,
    /// rolled back if it throws (what it throws is thrown as it is). PostgreSQL ends it if it is
    /// left idle for `idleInTransaction` (a transaction sets less, or more, for itself): a
    /// session gone silent inside one — its host or network gone after it locked a lease row —
    /// otherwise held the row until TCP's keepalive gave up, about two hours, and every write,
    /// renewal and takeover of those ledgers waited. Set in the transaction (as a connection's
    /// startup parameter, a pooler such as PgBouncer refuses it); `setsItsOwnLimits`: the body's
    /// first statement sets it (`lockHeld`), sparing a round trip.
    func transaction<Result: Sendable>(setsItsOwnLimits: Bool = false, _ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await client.withConnection { connection in
            try await connection.query("BEGIN ISOLATION LEVEL READ COMMITTED", logger: logger)
            if !setsItsOwnLimits {
                for try await _ in try await connection.query(
                    "SELECT set_config('idle_in_transaction_session_timeout', \(Self.idleInTransaction), true)", logger: logger)
                {}
            }
            do {
                let result = try await body(connection)
                try await connection.query("COMMIT", logger: logger)
                return result
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    /// How long a transaction may sit idle before PostgreSQL ends it (`transaction`).
    static let idleInTransaction = "30s"

    private static func end(of ledger: String, on connection: PostgresConnection, logger: Logger) async throws -> LogEnd? {
        var end: LogEnd?
        for try await (segment, ending, seals) in try await connection.query(
            """
            SELECT segment, "offset" + length(bytes), next_segment IS NOT NULL FROM tally_appends
            WHERE ledger = \(ledger) ORDER BY segment DESC, "offset" DESC LIMIT 1
            """, logger: logger
        ).decode((String, Int64, Bool).self) {
            end = LogEnd(segment: segment, length: Int(ending), sealed: seals)
        }
        return end
    }

    /// Refuses an append no writer makes: a name that is not a segment's, an offset inside the
    /// file header, no bytes.
    static func check(_ append: SegmentAppend, of ledger: String) throws {
        guard SegmentFormat.firstIndex(fromFileName: append.segment) != nil else {
            throw ClusterRefusal.invalid("'\(append.segment)' is not a segment's name (ledger '\(ledger)')")
        }
        if let next = append.nextSegment {
            guard SegmentFormat.firstIndex(fromFileName: next) != nil, next > append.segment
            else {
                throw ClusterRefusal.invalid("a seal of \(append.segment) naming '\(next)' next (ledger '\(ledger)')")
            }
        }
        guard append.offset >= SegmentFormat.fileHeaderSize, !append.bytes.isEmpty, append.offset <= Int(Int32.max) else {
            throw ClusterRefusal.invalid("an append of \(append.bytes.count) bytes at offset \(append.offset) of \(append.segment) (ledger '\(ledger)')")
        }
    }

    /// A lease's length in whole milliseconds, from 1 ms to a day.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let day: Int64 = 86_400_000
        let (seconds, attoseconds) = duration.components
        guard seconds < day / 1_000 else { return day }
        return min(day, max(1, seconds * 1_000 + attoseconds / 1_000_000_000_000_000))
    }
}

/// One ledger's lease: the node that may archive its appends, and the epoch they carry.
public struct ClusterLease: Sendable, Hashable {
    public let ledger: String
    public let node: String
    public let epoch: Int64

    public init(ledger: String, node: String, epoch: Int64) { (self.ledger, self.node, self.epoch) = (ledger, node, epoch) }
}

/// An append as archived, with the epoch of the lease it was archived under.
public struct ArchivedAppend: Sendable, Equatable {
    public let append: SegmentAppend
    public let epoch: Int64
}

/// What PostgreSQL refused, and why.
public enum ClusterRefusal: Error, Equatable, CustomStringConvertible {
    /// Another node holds a live lease on the ledger.
    case leaseHeld(ledger: String, owner: String)
    /// This node's log does not end where the archive does: behind (it must catch up first) or
    /// ahead (it holds bytes never archived, so never acknowledged).
    case notCaughtUp(ledger: String, archived: LogEnd?, local: LogEnd?)
    /// The lease named is no longer live and this node's: another node took the ledger over, or
    /// it expired (renew it first).
    case fenced(ledger: String, epoch: Int64)
    /// An append does not start where the archive ends.
    case notNext(ledger: String, expected: LogEnd?, got: SegmentAppend)
    /// What was asked cannot be (a name that is not a segment's, an empty append, a node with
    /// no name).
    case invalid(String)

    public var description: String {
        switch self {
        case .leaseHeld(let ledger, let owner): "ledger '\(ledger)' is served by node '\(owner)', whose lease has not expired"
        case .notCaughtUp(let ledger, let archived, let local):
            "this node's log of ledger '\(ledger)' ends \(local.map { "in \($0)" } ?? "before its first byte") and the archive's \(archived.map { "in \($0)" } ?? "before its first byte"): it must end where the archive does before it serves the ledger"
        case .fenced(let ledger, let epoch): "the lease of ledger '\(ledger)' under epoch \(epoch) is no longer this node's, or has expired"
        case .notNext(let ledger, let expected, let got):
            "an append to \(got.segment) at \(got.offset) of ledger '\(ledger)' does not follow the archive (which ends \(expected.map { "in \($0)" } ?? "before its first byte"))"
        case .invalid(let what): "refused: \(what)"
        }
    }
}

/// PostgreSQL did not answer in time: down, or so slow that waiting on would only hold the
/// caller's request (a client waits to connect for as long as it is let).
public struct ClusterUnanswered: Error, CustomStringConvertible {
    public let what: String
    public let limit: Duration
    public var description: String { "PostgreSQL did not answer \(what) within \(limit)" }
}

/// Runs `body` (a call on PostgreSQL), thrown `ClusterUnanswered` after `limit` without waiting
/// for it any longer: it is cancelled, but a query PostgresNIO has sent does not stop for that,
/// and a connection cut without a reset would hold the caller until TCP gives up.
public func answered<Value: Sendable>(_ what: String, within limit: Duration, _ body: @escaping @Sendable () async throws -> Value) async throws -> Value {
    let work = Task { try await body() }
    let answer = FirstAnswer<Value>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            answer.wait(continuation)
            Task {
                do { answer.give(.success(try await work.value)) } catch { answer.give(.failure(error)) }
            }
            Task {
                try? await Task.sleep(for: limit)
                work.cancel()
                answer.give(.failure(ClusterUnanswered(what: what, limit: limit)))
            }
        }
    } onCancel: {
        work.cancel()
    }
}

/// The first of several answers, handed to the one waiting for it; the later ones dropped.
private final class FirstAnswer<Value: Sendable>: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<Value, any Error>?, answered: Bool)>((nil, false))

    func wait(_ continuation: CheckedContinuation<Value, any Error>) { state.withLock { $0.continuation = continuation } }

    func give(_ result: Result<Value, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard !state.answered else { return nil }
            state.answered = true
            return state.continuation
        }
        continuation?.resume(with: result)
    }
}
