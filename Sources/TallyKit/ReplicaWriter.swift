import Foundation
import TallyLedger
import TallyLog

/// The writer of a replica an app embeds, held only while it writes: the first write opens the
/// `Ledger` (taking the folder's writer lock, waiting up to `lockTimeout` for another process
/// that holds it), and `idleRelease` after the last write it is closed again, so that the
/// widget's process — or the app's, while the widget writes — gets the lock in turn.
///
/// Readers never take it: `Replica`'s queries read the views, which SQLite lets any number of
/// processes read while one writes.
actor ReplicaWriter {
    let path: String
    let lockTimeout: Double
    let idleRelease: Duration
    private var ledger: Ledger?
    /// An open under way (another write waits for it rather than opening a second writer).
    private var opening: Task<Ledger, any Error>?
    /// Work on the whole folder under way (`exclusively`): writes wait for it.
    private var exclusiveUnderWay = false
    private var writesUnderWay = 0
    private var releaseAfterIdle: Task<Void, Never>?
    /// `release()` was asked for while writes were under way: done when the last one ends.
    private var releaseWhenDone = false

    init(path: String, lockTimeout: Double, idleRelease: Duration) {
        (self.path, self.lockTimeout, self.idleRelease) = (path, lockTimeout, Intervals.bounded(idleRelease, shortest: .zero))
    }

    /// Runs `body` with the ledger open for writing; the lock is kept until `idleRelease` has
    /// passed without another write.
    func withLedger<T: Sendable>(_ body: @Sendable (Ledger) async throws -> T) async throws -> T {
        while exclusiveUnderWay { try await Task.sleep(for: .milliseconds(5)) }
        releaseAfterIdle?.cancel()
        releaseAfterIdle = nil
        writesUnderWay += 1
        defer {
            writesUnderWay -= 1
            if writesUnderWay == 0 { releaseWhenDone ? release() : scheduleRelease() }
        }
        return try await body(try await open())
    }

    /// Runs `body` on the folder with the ledger closed and its writer lock held, so that no
    /// write of this process or another comes in meanwhile (giving a copy a new identity).
    func exclusively<T: Sendable>(_ body: @Sendable (String) async throws -> T) async throws -> T {
        while exclusiveUnderWay { try await Task.sleep(for: .milliseconds(5)) }
        exclusiveUnderWay = true
        defer { exclusiveUnderWay = false }
        while writesUnderWay > 0 || opening != nil { try await Task.sleep(for: .milliseconds(5)) }
        release()  // no write under way: closed now
        let (path, lockTimeout) = (path, lockTimeout)
        let lock = try await BlockingThreads.run { try FileLock(path: path + "/log/writer.lock", timeout: lockTimeout) }
        defer { lock.release() }
        return try await body(path)
    }

    /// Closes the ledger now, or — while writes are under way — as soon as the last one ends
    /// (a write is never cut off between its append and its answer).
    func release() {
        guard writesUnderWay == 0, opening == nil else {
            releaseWhenDone = true
            return
        }
        releaseWhenDone = false
        releaseAfterIdle?.cancel()
        releaseAfterIdle = nil
        ledger?.close()
        ledger = nil
    }

    private func open() async throws -> Ledger {
        if let ledger { return ledger }
        if let opening { return try await opening.value }
        let (path, lockTimeout) = (path, lockTimeout)
        // Waiting for another process's lock blocks a thread: not one of the actor's.
        let task = Task { try await BlockingThreads.run { try Self.openLedger(path, lockTimeout: lockTimeout) } }
        opening = task
        defer { opening = nil }
        let opened = try await task.value
        ledger = opened
        return opened
    }

    /// Opens the ledger in `path` as it is once the lock is held: the folder's identity is read
    /// again after the wait, because the holder may have given it a new one meanwhile.
    /// The folder is missing for the moment a split of another process puts the new replica in
    /// its place: that is waited for (up to `lockTimeout`), as the writer lock is.
    private static func openLedger(_ path: String, lockTimeout: Double) throws -> Ledger {
        let deadline = Date().addingTimeInterval(lockTimeout)
        while true {
            do {
                let ledger = try Ledger(directory: try DataDirectory(path: path), lockTimeout: lockTimeout)
                if try DataDirectory(path: path).identity == ledger.directory.identity { return ledger }
                ledger.close()  // given a new identity while this waited for the lock: again
            } catch LogError.notALog(_, _) where Date() < deadline {
                usleep(10_000)
            } catch LogError.io(_, _, let code) where code == ENOENT && Date() < deadline {
                usleep(10_000)
            }
            guard Date() < deadline else { throw LogError.writerLocked(directory: path, waitedSeconds: lockTimeout) }
        }
    }

    private func scheduleRelease() {
        let idle = idleRelease
        releaseAfterIdle = Task { [weak self] in
            try? await Task.sleep(for: idle)
            guard !Task.isCancelled else { return }
            await self?.releaseIfIdle()
        }
    }

    private func releaseIfIdle() {
        guard writesUnderWay == 0, !Task.isCancelled else { return }
        release()
    }
}
