import Foundation
import GRDB
import TallyCore
import TallyLog

/// The views as they stood when they had reached a past log index: what every query would
/// have answered then on this replica.
///
/// Made from the latest good snapshot at or before that index (`ViewSnapshots`), or from
/// empty views when there is none, with the events after it up to the index applied exactly
/// as the projector applied them — inside one transaction that is rolled back afterwards, so
/// the snapshot's file never changes. The connection keeps every changed page in memory
/// (`cache_spill` off), so applying costs no disk writes; the snapshot stays usable by any
/// number of as-of reads, one at a time per snapshot.
public enum AsOfViews {
    /// Runs `body` on `directory`'s views as they were at log index `index` (at most the
    /// log's end). `warn` hears of damaged snapshots passed over.
    public static func read<T>(
        _ directory: DataDirectory, at index: UInt64, warn: (String) -> Void,
        _ body: (Database) throws -> T
    ) throws -> T {
        let snapshots = ViewSnapshots(directory)
        while true {
            let snapshot = snapshots.latestGood(atOrBefore: index, warn: warn)
            do {
                return try read(
                    base: snapshot.map { snapshots.databasePath($0.index) }, expectedIndex: snapshot?.index, at: index,
                    events: { from, each in
                        try directory.reader.forEachEventChunk(from: from, each)
                    }, body)
            } catch let mismatch as SnapshotMismatch {
                // A copy that is not what its sidecar says: passed over like a damaged one.
                warn(
                    "snapshot \((mismatch.path as NSString).lastPathComponent) holds the views at log index \(mismatch.holds), not \(mismatch.recorded) as recorded; ignored and removed"
                )
                if let snapshot { snapshots.remove(snapshot) }
            }
        }
    }

    /// A snapshot whose views are at another index than its sidecar records.
    struct SnapshotMismatch: Error {
        var path: String
        var recorded: UInt64
        var holds: UInt64
    }

    /// The most events applied in one batch.
    static let largestBatch = 256_000

    /// Stops a log read once past the index asked for.
    private struct Enough: Error {}

    /// Runs `body` on the views of database `base` (a snapshot; nil for empty views) with the
    /// events up to `index` that follow its checkpoint applied. `events(from, each)` hands out
    /// the log's events from an index on, in chunks.
    static func read<T>(
        base: String?, expectedIndex: UInt64? = nil, at index: UInt64, events: (UInt64, ([LoggedEvent]) throws -> Void) throws -> Void,
        _ body: (Database) throws -> T
    ) throws -> T {
        var configuration = ProjectionDatabase.configuration()
        configuration.allowsUnsafeTransactions = true  // the transaction spans the apply and `body`, and is rolled back
        configuration.prepareDatabase { db in
            // Reads through a memory map (no read call per page of a cold file); changed pages kept in memory.
            try db.execute(sql: "PRAGMA cache_spill = OFF; PRAGMA cache_size = -1048576; PRAGMA mmap_size = 4294967296")
        }
        let queue: DatabaseQueue
        if let base {
            queue = try DatabaseQueue(path: base, configuration: configuration)
        } else {
            queue = try DatabaseQueue(configuration: configuration)
            try ProjectionDatabase.migrate(queue)
        }
        defer { try? queue.close() }
        return try queue.inDatabase { db in
            try db.execute(sql: "BEGIN IMMEDIATE")
            defer { try? db.execute(sql: "ROLLBACK") }
            let start = try Projector.checkpoint(db)
            if let base, let expected = expectedIndex, start != expected {
                throw SnapshotMismatch(path: base, recorded: expected, holds: start)
            }
            if start < index {
                // Big batches: each entity the events touch is loaded, folded and written once
                // per batch (memory bounded by the batch, for a read from nothing).
                var batch: [LoggedEvent] = []
                batch.reserveCapacity(Int(min(index - start, UInt64(largestBatch))))
                do {
                    try events(start + 1) { chunk in
                        let wanted = chunk.prefix { $0.index <= index }
                        batch.append(contentsOf: wanted)
                        if batch.count >= largestBatch {
                            _ = try Projector.applyBatch(batch, db)
                            batch.removeAll(keepingCapacity: true)
                        }
                        if wanted.count < chunk.count { throw Enough() }
                    }
                } catch is Enough {}
                _ = try Projector.applyBatch(batch, db)
            }
            return try body(db)
        }
    }
}
