/// A log's first `lastIndex` events folded by the merge rules: what the first load and the
/// rebuild write views from. An import into an empty log folds the events while it verifies
/// them and hands this to `Projector.catchUp(startingFrom:)`, so the first load need not read
/// and decode the whole log a second time.
public struct FoldedLog: Sendable {
    public private(set) var state = LedgerState()
    public private(set) var lastIndex: UInt64 = 0

    public init() {}

    /// A fold about to take `events` events: room made for as many entities (up to a million;
    /// a bigger fold grows as it goes).
    public init(expecting events: UInt64) { state.reserveCapacity(Int(min(events, 1_000_000))) }

    /// The state alone, this fold given up: whoever holds the last copy of a state frees it,
    /// which for a whole ledger takes a while (`ProjectionRebuilder.writeViews`).
    public consuming func intoState() -> LedgerState { state }

    /// Folds the next event of the log (the one at `lastIndex + 1`).
    public mutating func apply(_ event: Event) {
        state.apply(event)
        lastIndex += 1
    }
}
