import TallyCore

/// Reads for a caller on Swift's cooperative threads (a request's task): the one async way to
/// ask the views, now or as of an earlier point, that does its own hop onto the
/// `BlockingThreads` — as GRDB's `read { db in … }` does. (`views` stays for a caller already
/// off those threads: the CLI, a test, the ledger's own work.)
extension Ledger {
    /// Runs `query` on the views as they stand, or as they stood at `asOf` on this replica (at
    /// most as they stand now), and answers its value with the log index it was answered for
    /// when `asOf` was given. Reads as of a point take turns (`asOfTurns`); `warn` hears of a
    /// damaged snapshot that was passed over.
    public func read<T: Sendable>(
        asOf: AsOf? = nil, warn: @escaping @Sendable (String) -> Void = { _ in }, _ query: @escaping @Sendable (LedgerViews) throws -> T
    ) async throws -> (value: T, asOfIndex: UInt64?) {
        let views = views
        let read = {
            try await self.blocking {
                let answering = try asOf.map { try views.asOf($0, warn: warn) } ?? views
                return (try query(answering), answering.asOfIndex)
            }
        }
        guard asOf != nil else { return try await read() }
        return try await asOfTurns.run(refusal: LedgerError.asOfBusy(readers: asOfTurns.maxWaiting + 1), read)
    }

    /// Runs `query` on the views as they stand, on the blocking threads.
    public func read<T: Sendable>(_ query: @escaping @Sendable (LedgerViews) throws -> T) async throws -> T {
        try await read(asOf: nil, query).value
    }

    /// Builds an export (`LedgerViews.exportTable`, `exportJSONLines`) in the ledger's turn,
    /// which the caller holds until the export is sent (`turn`; it is given back when the
    /// ticket is freed at the latest): each export holds all of the ledger's expenses, or every
    /// entity, in memory, so one is built and sent at a time, four more wait, and one past them
    /// is refused (`LedgerError.exportBusy`, HTTP 503) — a read token asking for exports on
    /// every connection, and taking them slowly, once held as many copies of the ledger.
    public func export<T: Sendable>(_ build: @escaping @Sendable (LedgerViews) throws -> T) async throws -> (value: T, turn: Turns.Ticket) {
        guard let turn = await exportTurns.ticket() else { throw LedgerError.exportBusy(exports: exportTurns.maxWaiting + 1) }
        return (try await read(build), turn)
    }
}
