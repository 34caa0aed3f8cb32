/// What a ledger may hold and take beyond what each request asks of it, set by whoever opens
/// it — a hosted service, from the ledger's quota. By default, no limits.
public struct LedgerLimits: Sendable {
    /// The most bytes its attachments may hold together, asked at each new blob: an upload,
    /// or one a sync fetches from a peer (nil: no limit; `BlobStore.quota`).
    public var attachmentBytes: @Sendable () -> Int?
    /// How many more events it may take today, its log at `appendedIndex`: asked before the
    /// writes it makes by itself, which no request's quota check saw — recurring occurrences,
    /// of which a rule (maybe a peer's) can make thousands (nil: no limit).
    public var eventsLeftToday: @Sendable (_ appendedIndex: UInt64) -> Int?

    public init(
        attachmentBytes: @escaping @Sendable () -> Int? = { nil }, eventsLeftToday: @escaping @Sendable (_ appendedIndex: UInt64) -> Int? = { _ in nil }
    ) {
        (self.attachmentBytes, self.eventsLeftToday) = (attachmentBytes, eventsLeftToday)
    }
}
