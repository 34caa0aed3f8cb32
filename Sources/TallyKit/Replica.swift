import Foundation
import Synchronization
import TallyCore
import TallyLedger
import TallyLog
import TallyStore
import TallySync

/// A household ledger's replica inside an app: a folder (an App Group container, so that the
/// app and its widget share it) holding the same log and views as `tally serve`'s data
/// directory, written through the same gate (`Ledger`: field specs, write rules, signed log).
///
/// ```swift
/// let replica = try await Replica.open(at: containerURL.appending(path: "ledger").path, actor: "minji")
/// let lunch = try await replica.create(ExpenseFields(amount: 12_000, payee: "Kimbap"))
/// for try await month in replica.watch({ try $0.summary(month: "2026-11") }) { show(month) }
/// ```
///
/// Reads never wait: they go to the views, which any number of processes read while one
/// writes. Writes take the folder's writer lock for as long as they come in and give it back
/// `writerIdleRelease` after the last one (`ReplicaWriter`), so two processes take turns.
public final class Replica: Sendable {
    /// The folder.
    public let path: String
    /// Who this replica's writes are by (the `actor` of every event it writes: a person's name).
    public let actor: String
    let writer: ReplicaWriter
    /// The folder's identity and views as last opened; opened again when the identity on disk
    /// changed (this replica, or another process on the same folder, found it was a copy).
    private let opened: Mutex<Opened>
    /// Members' sessions with servers this replica syncs with (`SyncServer.Credentials.member`),
    /// in `DATA_DIR/app-sessions.json`: signing in costs the server a password hash. A damaged
    /// file is an empty one (the next sync signs in again), not a sync stopped for good.
    var sessions: SecretFile<[String: SyncMemory.KeptSession]> { SecretFile(path: path + ReplicaSplit.sessionsFile, empty: [:], damagedMeansEmpty: true) }
    /// Per kept session, a digest of the password last checked against its hash, in memory only
    /// (`signedIn(_:with:_:)`): a sync every 30 s does not pay a scrypt check each time.
    let checkedPasswords = Mutex<[String: [UInt8]]>([:])
    /// Per kept-session key, a digest of the password the server last refused as wrong, when,
    /// and how many times in a row, in memory only: a sync every 30 s with a password changed
    /// elsewhere does not sign in with it again for `refusedPasswordHold` — each a failed
    /// sign-in the server counts against the member's name, locking it for her other devices
    /// and the web app too.
    let refusedPasswords = Mutex<[String: (memo: [UInt8], at: ContinuousClock.Instant, times: Int)]>([:])

    /// How long a password refused `times` times in a row is not sent again: 15 minutes, then
    /// twice as long each time, up to a day. Not the server's longest lockout (15 minutes)
    /// alone: its count of failures is cleared only by a good sign-in, so a try as each lockout
    /// ended would lock the name again at once; nor a day at once: a hosted ledger briefly
    /// missing answers as a wrong password does (on purpose), and the right password then
    /// waits only the first 15 minutes (or the app's next launch).
    static func refusedPasswordHold(times: Int) -> Duration {
        .seconds(min(900 << min(max(times, 1) - 1, 7), 86_400))
    }

    struct Opened {
        var directory: DataDirectory
        var views: LedgerViews
        /// The `replica.json` file those were opened from.
        var home: ReplicaHome
    }

    /// How long a write waits for another process's writes by default.
    public static let defaultLockTimeout: Double = 10
    /// How long the writer lock is kept after the last write by default.
    public static let defaultWriterIdleRelease: Duration = .milliseconds(500)

    /// Opens the replica in `folder`, creating it (a new replica id and signing key) when the
    /// folder holds none yet. `name` names a new replica ("minji's iPhone").
    ///
    /// A folder that is not where this replica was last opened — restored from a backup onto
    /// another device, or copied — may be one of two live copies: it is given a new identity
    /// before it writes anything, and the change is recorded in its log (`identityChange`).
    public static func open(
        at folder: String, name: String = "app", actor: String,
        lockTimeout: Double = defaultLockTimeout, writerIdleRelease: Duration = defaultWriterIdleRelease
    ) async throws -> Replica {
        try EntitySchema.validateActor(actor)
        guard !actor.isEmpty else { throw ValidationError(field: "actor", "must name who writes (a person's name)") }
        guard lockTimeout.isFinite, lockTimeout >= 0 else { throw ValidationError(field: "lockTimeout", "must be a number of seconds, 0 or more") }
        // Waits for locks block a thread: one of the blocking pool's, not one of Swift's few.
        let replica = try await BlockingThreads.run {
            try FileManager.default.createDirectory(atPath: (folder as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let folderLock = try ReplicaSplit.folderLock(folder, timeout: lockTimeout)
            defer { folderLock.release() }
            try ReplicaSplit.finishInterrupted(folder)
            if !FileManager.default.fileExists(atPath: folder + "/replica.json") {
                let directory = try DataDirectory.create(path: folder, name: name)
                try directory.openWriter().close()  // its log and signing key from the first moment
                try ReplicaHome.record(directory)
            }
            try ReplicaSplit.takeNewIdentityIfMoved(folder, lockTimeout: lockTimeout)
            return try Replica(path: folder, actor: actor, lockTimeout: lockTimeout, writerIdleRelease: writerIdleRelease)
        }
        if let change = ReplicaSplit.pendingChange(folder) {
            try await replica.writing { ledger in
                if try ledger.views.setting(change.settingKey) == nil { try await ledger.recordIdentityChange(change, actor: actor) }
                try? FileManager.default.removeItem(atPath: folder + ReplicaSplit.pendingChange)
            }
        }
        return replica
    }

    private init(path: String, actor: String, lockTimeout: Double, writerIdleRelease: Duration) throws {
        self.path = path
        self.actor = actor
        opened = Mutex(try Self.open(path))
        writer = ReplicaWriter(path: path, lockTimeout: lockTimeout, idleRelease: writerIdleRelease)
    }

    private static func open(_ path: String) throws -> Opened {
        let directory = try DataDirectory(path: path)
        return Opened(directory: directory, views: try LedgerViews.open(directory), home: try ReplicaHome.current(directory))
    }

    /// The folder's identity and views now (opened again if its identity changed).
    func current() throws -> Opened {
        let snapshot = opened.withLock { $0 }
        var info = stat()
        let moved = stat(path + "/replica.json", &info) != 0 || UInt64(info.st_ino) != snapshot.home.inode || UInt64(info.st_dev) != snapshot.home.device
        guard moved else { return snapshot }
        let fresh = try Self.open(path)
        opened.withLock { $0 = fresh }
        return fresh
    }

    /// The replica's data directory (its identity: replica id, name).
    public var directory: DataDirectory { get throws { try current().directory } }

    /// This replica's id (the origin of the events it writes).
    public var replicaID: String { get throws { try directory.identity.replicaId } }

    /// Gives the writer lock back now (an app going to the background calls this; the next
    /// write takes it again).
    public func releaseWriter() async { await writer.release() }

    /// Runs `body` with the ledger open for writing (the lock taken, or waited for).
    func writing<T: Sendable>(_ body: @Sendable (Ledger) async throws -> T) async throws -> T {
        try await writer.withLedger(body)
    }
}
