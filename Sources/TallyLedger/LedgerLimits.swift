/// What a ledger may hold beyond what each request asks of it, set by whoever opens it — a
/// hosted service, from the ledger's quota. By default, no limits.
public struct LedgerLimits: Sendable {
    /// The most bytes its attachments may hold together, asked at each new blob: an upload,
    /// or one a sync fetches from a peer (nil: no limit; `BlobStore.quota`).
    public var attachmentBytes: @Sendable () -> Int?

    public init(attachmentBytes: @escaping @Sendable () -> Int? = { nil }) { self.attachmentBytes = attachmentBytes }
}
