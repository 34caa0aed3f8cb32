import Foundation
import TallyStore

/// How often the views are copied for as-of reads (`ViewSnapshots`), and how many copies stay.
public struct SnapshotPolicy: Sendable {
    /// A snapshot once the views are this many events past the latest one.
    public var every: UInt64
    /// The most snapshots kept; beyond, they thin out evenly over the log (never the newest).
    public var keep: Int

    /// Every 50,000 events, at most 24: an as-of read then applies at most 50,000 events (about
    /// half a second here; 25,000 on average) until the log outgrows 1.2 M events, and the
    /// copies take about 12× the views' size (each is the views as they were then).
    public init(every: UInt64 = 50_000, keep: Int = 24) { (self.every, self.keep) = (every, keep) }
}

extension LedgerViews {
    /// Every snapshot, oldest first.
    public func snapshots() -> [ViewSnapshots.Snapshot] { ViewSnapshots(directory).list() }

    /// What is wrong with a snapshot's file (size or checksum), or nil.
    public func problem(with snapshot: ViewSnapshots.Snapshot) -> String? { ViewSnapshots(directory).problem(with: snapshot) }

    /// Takes a snapshot of the views as they stand when `policy` says one is due (or
    /// `always`), then thins the kept ones; nil when none was taken.
    @discardableResult
    public func takeSnapshot(_ policy: SnapshotPolicy, always: Bool = false) throws -> ViewSnapshots.Snapshot? {
        let snapshots = ViewSnapshots(directory)
        guard try always || snapshots.isDue(checkpoint: store.checkpoint(), every: policy.every) else { return nil }
        let taken = try store.takeSnapshot(into: snapshots)
        snapshots.thin(keeping: policy.keep)
        return taken
    }
}

extension Ledger {
    /// A snapshot of the views when `policy` says one is due, judged by `projectedIndex`
    /// (known in memory: an open ledger's check every few seconds opens no connection to the
    /// views); nil when none was taken.
    public func takeSnapshotIfDue(_ policy: SnapshotPolicy) throws -> ViewSnapshots.Snapshot? {
        guard ViewSnapshots(directory).isDue(checkpoint: projectedIndex, every: policy.every) else { return nil }
        return try views.takeSnapshot(policy, always: true)
    }
}
