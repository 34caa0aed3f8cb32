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
    let directory: DataDirectory
    let lockTimeout: Double
    let idleRelease: Duration
    private var ledger: Ledger?
    /// An open under way (another write waits for it rather than opening a second writer).
    private var opening: Task<Ledger, any Error>?
    private var writesUnderWay = 0
    private var releaseAfterIdle: Task<Void, Never>?

    init(directory: DataDirectory, lockTimeout: Double, idleRelease: Duration) {
        (self.directory, self.lockTimeout, self.idleRelease) = (directory, lockTimeout, idleRelease)
    }

    /// Runs `body` with the ledger open for writing; the lock is kept until `idleRelease` has
    /// passed without another write.
    func withLedger<T: Sendable>(_ body: @Sendable (Ledger) async throws -> T) async throws -> T {
        releaseAfterIdle?.cancel()
        releaseAfterIdle = nil
        writesUnderWay += 1
        defer {
            writesUnderWay -= 1
            if writesUnderWay == 0 { scheduleRelease() }
        }
        return try await body(try await open())
    }

    /// Whether this process holds the writer lock now.
    var isHoldingLock: Bool { ledger != nil }

    /// Closes the ledger now (waiting for nothing: call it when no write is under way).
    func release() {
        releaseAfterIdle?.cancel()
        releaseAfterIdle = nil
        ledger?.close()
        ledger = nil
    }

    private func open() async throws -> Ledger {
        if let ledger { return ledger }
        if let opening { return try await opening.value }
        let (directory, lockTimeout) = (directory, lockTimeout)
        // Waiting for another process's lock blocks a thread: not one of the actor's.
        let task = Task.detached { try Ledger(directory: directory, lockTimeout: lockTimeout) }
        opening = task
        defer { opening = nil }
        let opened = try await task.value
        ledger = opened
        return opened
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
