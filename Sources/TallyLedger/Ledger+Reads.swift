import TallyCore

/// Reads for a caller on Swift's cooperative threads (a request's task): the one async way to
/// ask the views, now or as of an earlier point, that does its own hop onto the
/// `BlockingThreads` — as GRDB's `read { db in … }` does. (`views` stays for a caller already
/// off those threads: the CLI, a test, the ledger's own work.)
extension Ledger {
    /// Runs `query` on the views as they stand, or as they stood at `asOf` on this replica (at
    /// most as they stand now), and answers its value with the log index it was answered for
    /// when `asOf` was given. Reads as of a point take turns (`AsOfTurns`); `warn` hears of a
    /// damaged snapshot that was passed over.
    public func read<T: Sendable>(
        asOf: AsOf? = nil, warn: @escaping @Sendable (String) -> Void = { _ in }, _ query: @escaping @Sendable (LedgerViews) throws -> T
    ) async throws -> (value: T, asOfIndex: UInt64?) {
        let views = views
        let read = {
            try await BlockingThreads.run {
                let answering = try asOf.map { try views.asOf($0, warn: warn) } ?? views
                return (try query(answering), answering.asOfIndex)
            }
        }
        guard asOf != nil else { return try await read() }
        try await asOfTurns.enter()
        do {
            let answer = try await read()
            await asOfTurns.leave()
            return answer
        } catch {
            await asOfTurns.leave()
            throw error
        }
    }

    /// Runs `query` on the views as they stand, on the blocking threads.
    public func read<T: Sendable>(_ query: @escaping @Sendable (LedgerViews) throws -> T) async throws -> T {
        try await read(asOf: nil, query).value
    }
}

/// As-of reads one at a time: each applies up to a snapshot interval of events (about half a
/// second) and holds its snapshot's write lock meanwhile, so running several at once only
/// makes them wait on each other inside SQLite. A few more wait their turn here; beyond that a
/// caller is told to retry (`LedgerError.asOfBusy`) instead of holding a thread for a minute.
actor AsOfTurns {
    private var running = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private let maxWaiting: Int

    init(maxWaiting: Int = 16) { self.maxWaiting = maxWaiting }

    func enter() async throws {
        guard running else {
            running = true
            return
        }
        guard waiting.count < maxWaiting else { throw LedgerError.asOfBusy(readers: maxWaiting + 1) }
        await withCheckedContinuation { waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty { running = false } else { waiting.removeFirst().resume() }
    }
}
