import NIOPosix

/// The threads blocking work runs on (an `fdatasync`, a SQLite transaction, a round of
/// writes), off Swift's few cooperative threads: one pool for the whole process, shared by
/// every open ledger and the service's routes, so threads do not grow with open ledgers.
///
/// 64 threads: as many as there are writers worth grouping into one `fdatasync` and one
/// projection transaction. A write spends most of its time waiting for the disk, and a pool
/// sized to the cores (what a concurrent `DispatchQueue` gives on Linux) let only two writes
/// wait at once — a group commit of two.
public enum BlockingThreads {
    public static let count = 64

    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: count)
        pool.start()
        return pool
    }()

    /// Runs `work` on one of the threads and awaits it. (A ledger's own work goes through
    /// `Ledger.blocking`, which keeps to the ledger's share.)
    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive { try work() }
    }

    /// The threads rounds of batched writes run on (`WriteBatcher`): a few of their own, so
    /// that slow blocking work on the others (an import, an as-of read, a thumbnail's worker)
    /// can never hold up a write. A round is one `fdatasync` and one projection transaction,
    /// and each ledger runs one round at a time.
    static let writeRoundThreads = 16

    private static let writeRounds: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: writeRoundThreads)
        pool.start()
        return pool
    }()

    /// Runs a round of writes on the write-round threads and awaits it.
    static func runWriteRound(_ round: @escaping @Sendable () -> Void) async throws {
        try await writeRounds.runIfActive { round() }
    }
}

extension Ledger {
    /// Runs `work` on the `BlockingThreads` in the ledger's turn: at most
    /// `LedgerLimits.threadsAtOnce` of them work for one ledger at once. `work` must not wait
    /// for other work of the same ledger to get a thread (none does: each is one synchronous
    /// piece, and what it waits on — a write round, a lock — is held by work that runs).
    public func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        // Never refused: the ledger's turns have no limit on waiting (a caller waits, holding no thread).
        try await threadTurns.run(refusal: CancellationError()) { try await BlockingThreads.run(work) }
    }
}
