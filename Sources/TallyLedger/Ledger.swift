import Foundation
import Synchronization
import TallyCore
import TallyLog
import TallyStore
import TallySync

/// The application layer (DESIGN.md §10): one replica's data directory opened for writing —
/// the writer lock held, the views caught up — and the one gate every write passes through,
/// whether it comes from the CLI, an HTTP request, a bundle or a peer's stream. The CLI's
/// commands and the service's routes only translate into calls on it.
///
/// Local writes are in `Ledger+Writes.swift`, replication in `Ledger+Replication.swift`;
/// queries need no writer and live in `LedgerViews`, which `views` offers; the work a ledger
/// does by itself while open (recurrences, snapshots, retention, peer syncs) is
/// `backgroundWork` (`LedgerBackgroundWork`). The log's writer and the views' projector are
/// the ledger's own: nothing outside it appends or projects.
public final class Ledger: Sendable {
    /// The replica.
    public let directory: DataDirectory
    /// Its log, held for the ledger's lifetime (so another writer waits or fails clearly).
    let writer: LogWriter
    /// Its views.
    let projector: Projector
    /// Queries on the views.
    public let views: LedgerViews
    /// Refuse replicated events stamped further ahead of this machine's clock (DESIGN.md §5.1).
    public let maximumSkewMillis: UInt64
    let session: LedgerSession
    /// The entities being created under an `Idempotency-Key` right now (`Ledger+Writes`).
    let idempotentCreates = Mutex<Set<UUID>>([])
    /// Expenses whose split is being written (`setLines`): one at a time each.
    let splitsUnderWay = Mutex<Set<UUID>>([])
    /// Statement imports reading or writing now (`importFile`), at most `maxImportsAtOnce`.
    let importsUnderWay = Mutex(0)
    /// Reads of the ledger as it was take turns, one at a time (each applies up to a snapshot
    /// interval of events, about half a second, and holds its snapshot's write lock meanwhile,
    /// so several at once only wait on each other inside SQLite); past 16 waiting a caller is
    /// told to retry (`LedgerError.asOfBusy`) instead of holding a thread for a minute.
    let asOfTurns = Turns(atOnce: 1, maxWaiting: 16)
    /// Held while recurrences' occurrences are decided and written (`materializeRecurrences`).
    let materializing = NSLock()
    /// Exports are built one at a time (`export`).
    let exportTurns = Turns(atOnce: 1, maxWaiting: 4)
    /// The ledger's share of the process's `BlockingThreads` (`blocking`).
    let threadTurns: Turns
    /// Deliveries of events from outside (pulls, pushes, bundles) take turns (`DeliveryTurn`).
    let deliveries = DeliveryTurn()
    /// The most statement imports one ledger runs at once.
    public static let maxImportsAtOnce = 2
    /// What the last open found and did, for the caller to log.
    public let opening: Opening
    /// Where a hosted ledger on a cluster puts its log's bytes and its attachments before it
    /// acknowledges them; nil for a ledger on its own.
    let archive: (any LedgerArchive)?
    /// What it may hold beyond what each request asks (a hosted ledger's quota).
    let limits: LedgerLimits

    /// What opening did: a torn tail cut from the log, events projected to catch up.
    public struct Opening: Sendable {
        public var tornTail: String?
        public var caughtUp: Int
    }

    /// Opens the replica at `directory` for writing: takes the writer lock (waiting up to
    /// `lockTimeout` seconds for another writer), migrates and catches up the views. With an
    /// `archive` (a hosted ledger on a cluster), every byte the writer appends is archived
    /// before it is written (`LogConfiguration.archive`), and every attachment before it is
    /// held (`BlobStore.archive`). `limits` bound what it holds (its attachments' bytes).
    public init(
        directory: DataDirectory, lockTimeout: Double = 10, maximumSkewMillis: UInt64 = 300_000, viewConnections: ViewConnections = ViewConnections(),
        archive: (any LedgerArchive)? = nil, limits: LedgerLimits = LedgerLimits()
    ) throws {
        self.directory = directory
        self.archive = archive
        self.limits = limits
        threadTurns = Turns(atOnce: limits.threadsAtOnce)
        self.maximumSkewMillis = maximumSkewMillis
        var configuration = LogConfiguration()
        configuration.lockTimeout = lockTimeout
        configuration.archive = archive
        writer = try directory.openWriter(configuration: configuration)
        do {
            projector = try Projector(directory: directory, connections: viewConnections)
            var viewsReach = try projector.checkpointOnWriter()
            // Views ahead of the log: the log was cut since (`tally log repair`), so they show
            // events that are gone, and the next appends would reuse their indexes unprojected.
            if viewsReach > writer.head.lastIndex {
                ViewSnapshots(directory).removeAll(after: writer.head.lastIndex)
                RecurrenceProgress.remove(from: directory)  // it may count occurrences the cut took
                _ = try ProjectionRebuilder.rebuild(directory, verifyOnly: false)
                viewsReach = try projector.checkpointOnWriter()  // where the rebuild left them
            }
            projector.progress.advanced(to: viewsReach)  // `projectedIndex` from here on
            // Views that show the whole log need no catch-up: reading the log to find nothing
            // after the checkpoint costs a scan of the open segment. Views far behind (a node
            // that caught a ledger up from the cluster's archive, a copied log) are brought up
            // as a bulk: written anew when what they lack outnumbers what they show.
            let caughtUp = viewsReach < writer.head.lastIndex ? try projector.catchUpInBulk(through: writer.head.lastIndex) : 0
            opening = Opening(tornTail: writer.recovery.tornTail.map { "\($0)" }, caughtUp: caughtUp)
        } catch {
            writer.close()
            throw error
        }
        views = LedgerViews(projector: projector)
        session = LedgerSession(writer: writer, projector: projector)
        BlobStore(directory: directory).removeLeftovers()  // partial uploads and imports a kill left behind
    }

    /// Cuts the log at its first damaged frame (`LogRepair`) and, when the cut removed events
    /// the views already show, rebuilds the views from what is left — so no reader, writer or
    /// not, sees an event that is no longer in the log.
    public static func repairLog(_ directory: DataDirectory, lockTimeout: Double) throws -> RepairReport {
        let report = try LogRepair.repair(directory: directory.logPath, lockTimeout: lockTimeout)
        AuditIndex.remove(from: directory)  // its log positions may name what the cut moved aside
        ViewSnapshots(directory).removeAll(after: report.lastIndexKept)  // as-of copies of views the cut undid
        RecurrenceProgress.remove(from: directory)  // days it counts as decided may have lost their occurrences
        if ProjectionDatabase.peekCheckpoint(directory) > report.lastIndexKept {
            _ = try ProjectionRebuilder.rebuild(directory, verifyOnly: false)
        }
        return report
    }

    /// Waits for in-flight appends, releases the writer lock and closes the views (their WAL
    /// checkpointed and emptied, so that the next open reads none of it back).
    public func close() {
        writer.close()
        projector.close()
    }

    /// Gives back the memory and descriptors idle connections to the views hold (a hosted
    /// ledger open but unused); the next request opens what it needs again.
    public func releaseMemory() { projector.releaseMemory() }

    /// The log index of the last event appended.
    public var appendedIndex: UInt64 { writer.head.lastIndex }

    /// The log index the views reflect, as this ledger's projector left them: known in memory
    /// (every projection of an open ledger is its projector's), so asking opens no connection.
    public var projectedIndex: UInt64 { projector.progress.index }

    /// Why the log's writer stopped (a failed write or fsync: it acknowledges nothing after, and
    /// the ledger must be reopened once the cause is fixed), or nil while it writes.
    public var stoppedBecause: String? { writer.stoppedBecause }

    /// This replica's version vector (its local-only chain excluded: it never leaves).
    public var vector: VersionVector { VersionVector(head: writer.head, excluding: directory.identity.localOnlyOrigin) }
}
