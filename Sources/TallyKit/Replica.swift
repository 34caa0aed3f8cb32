import Foundation
import TallyCore
import TallyLedger
import TallyLog
import TallyStore

/// A household ledger's replica inside an app: a folder (an App Group container, so that the
/// app and its widget share it) holding the same log and views as `tally serve`'s data
/// directory, written through the same gate (`Ledger`: field specs, write rules, signed log).
///
/// ```swift
/// let replica = try Replica.open(at: containerURL.appending(path: "ledger").path, actor: "minji")
/// let lunch = try await replica.createExpense(ExpenseFields(amount: 12_000, payee: "Kimbap"))
/// for try await month in replica.watch({ try $0.summary(month: "2026-11") }) { show(month) }
/// ```
///
/// Reads never wait: they go to the views, which any number of processes read while one
/// writes. Writes take the folder's writer lock for as long as they come in and give it back
/// `writerIdleRelease` after the last one (`ReplicaWriter`), so two processes take turns.
public final class Replica: Sendable {
    /// The folder.
    public let directory: DataDirectory
    /// Who this replica's writes are by (the `actor` of every event it writes: a person's name).
    public let actor: String
    /// The views, for every query.
    let views: LedgerViews
    let writer: ReplicaWriter

    /// How long a write waits for another process's writes by default.
    public static let defaultLockTimeout: Double = 10
    /// How long the writer lock is kept after the last write by default.
    public static let defaultWriterIdleRelease: Duration = .milliseconds(500)

    /// Opens the replica in `folder`, creating it (a new replica id and signing key) when the
    /// folder holds none yet. `name` names a new replica ("minji's iPhone").
    public static func open(
        at folder: String, name: String = "app", actor: String,
        lockTimeout: Double = defaultLockTimeout, writerIdleRelease: Duration = defaultWriterIdleRelease
    ) throws -> Replica {
        try EntitySchema.validateActor(actor)
        guard !actor.isEmpty else { throw ValidationError(field: "actor", "must name who writes (a person's name)") }
        let directory: DataDirectory
        if FileManager.default.fileExists(atPath: folder + "/replica.json") {
            directory = try DataDirectory(path: folder)
        } else {
            directory = try DataDirectory.create(path: folder, name: name)
            try directory.openWriter().close()  // its log and signing key from the first moment
        }
        return try Replica(directory: directory, actor: actor, lockTimeout: lockTimeout, writerIdleRelease: writerIdleRelease)
    }

    private init(directory: DataDirectory, actor: String, lockTimeout: Double, writerIdleRelease: Duration) throws {
        self.directory = directory
        self.actor = actor
        views = try LedgerViews.open(directory)
        writer = ReplicaWriter(directory: directory, lockTimeout: lockTimeout, idleRelease: writerIdleRelease)
    }

    /// This replica's id (the origin of the events it writes).
    public var replicaID: String { directory.identity.replicaId }

    /// Gives the writer lock back now (an app going to the background calls this; the next
    /// write takes it again).
    public func releaseWriter() async { await writer.release() }

    /// Runs `body` with the ledger open for writing (the lock taken, or waited for).
    func writing<T: Sendable>(_ body: @Sendable (Ledger) async throws -> T) async throws -> T {
        try await writer.withLedger(body)
    }
}
