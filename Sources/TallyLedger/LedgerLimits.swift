/// What a ledger may hold beyond what each request asks of it, set by whoever opens it — a
/// hosted service, from the ledger's quota. By default, no limits.
public struct LedgerLimits: Sendable {
    /// The most bytes its attachments may hold together, asked at each new blob: an upload,
    /// or one a sync fetches from a peer (nil: no limit; `BlobStore.quota`).
    public var attachmentBytes: @Sendable () -> Int?
    /// The most of the process's `BlockingThreads` its work holds at once (`Ledger.blocking`);
    /// the rest waits its turn. A ledger among many (`tally serve --ledgers`) gets an eighth,
    /// so that one household's slow reads — exports, reports, as many as its connections
    /// allow — leave threads to every other; a ledger on its own gets them all.
    public var threadsAtOnce: Int
    /// The longest an import may spend matching its rows against the ledger's categorisation
    /// rules (there may be any number of them; a wildcard one costs up to a cell's text × its
    /// pattern a row) before it is refused, nothing written — as long as reading a statement may take.
    public var categorisingTime: Duration

    public init(
        attachmentBytes: @escaping @Sendable () -> Int? = { nil }, threadsAtOnce: Int = BlockingThreads.count, categorisingTime: Duration = .seconds(60)
    ) {
        (self.attachmentBytes, self.threadsAtOnce, self.categorisingTime) = (attachmentBytes, threadsAtOnce, categorisingTime)
    }

    /// A hosted ledger's share of the threads.
    public static let hostedThreadsAtOnce = BlockingThreads.count / 8
}
