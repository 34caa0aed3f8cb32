import Foundation
import GRDB
import TallyCore
import TallyLog

/// How far a rebuild has got, for progress displays.
public struct RebuildProgress: Sendable {
    /// What it is doing: "replaying", "writing views", "catching up", "comparing".
    public var phase: String
    /// Events replayed so far.
    public var done: Int
    /// Events in the log when the rebuild started.
    public var total: Int
    /// Seconds since the rebuild started.
    public var elapsed: Double
}

/// What a rebuild found and did.
public struct RebuildReport: Sendable {
    /// Events replayed.
    public var events: Int
    /// Entities (live or not) in the rebuilt state.
    public var entities: Int
    /// Differences between the live views and the rebuilt ones; empty when none.
    public var differences: [String]
    /// Per-table row counts and checksums of the rebuilt views.
    public var tables: [ViewChecksum.Table]
    /// Whether the rebuilt views replaced the live ones.
    public var swapped: Bool
    /// The generation now live.
    public var generation: Int
    /// Seconds taken.
    public var seconds: Double
}

/// Replays the whole log into a fresh database beside the live one, compares the two, and
/// swaps the fresh one in atomically (unless only verifying). The live views keep answering
/// throughout; a rebuild killed half-way leaves only a stray next-generation file, which the
/// next rebuild replaces.
public enum ProjectionRebuilder {
    /// Writes every entity of a folded state, in id order, and the checkpoint, into empty views
    /// (the expense tables' indexes are built after their rows). States are encoded and row
    /// values built on a second thread, a chunk ahead of the SQLite writes on this one.
    ///
    /// Takes the state: once the rows are written it is freed on another thread while this one
    /// builds the indexes — for a whole ledger, freeing its entities takes a good part of a
    /// second, and the index builds use one core. (When the caller keeps a copy, the last
    /// copy's owner frees it instead.)
    public static func writeViews(of state: consuming LedgerState, lastIndex: UInt64, _ db: Database, progress: (Int, Int) -> Void = { _, _ in }) throws {
        let indexes = try ProjectionDatabase.dropIndexes(of: ["expenses", "expense_tags"], db)
        try writeRows(of: state, db, progress: progress)
        freeElsewhere(consume state)
        try ProjectionDatabase.createIndexes(indexes, db)
        try CategoryViews.refresh(db)
        try db.execute(sql: "UPDATE projection_checkpoint SET last_index = ? WHERE id = 1", arguments: [Int64(lastIndex)])
    }

    /// Every entity's state and rows, and the conflicts, into empty tables.
    static func writeRows(of state: borrowing LedgerState, _ db: Database, progress: (Int, Int) -> Void) throws {
        let entities = state.entities
        let order = inWritingOrder(entities)
        let winners = try ViewRows.categoryWinners(db)
        var written = 0
        try Prefetcher<[(id: EntityID, type: EntityType, state: [UInt8], rows: ViewRows.Rows)]>.run(produce: { emit in
            for first in stride(from: 0, to: order.count, by: 1_024) {
                try emit(order[first..<min(first + 1_024, order.count)].map { position in
                    let entity = entities[position].value
                    return (entity.id, entity.type, EntityStateCodec.encode(entity), ViewRows.rows(of: entity, winners: winners))
                })
            }
        }, consume: { chunk in
            for prepared in chunk {
                try Projector.saveState(id: prepared.id, type: prepared.type, encoded: prepared.state, db)
                try ViewRows.write(from: .none, to: prepared.rows, db)
            }
            if written / 50_000 != (written + chunk.count) / 50_000 { progress(written + chunk.count, order.count) }
            written += chunk.count
        })
        for (id, conflicts) in state.conflicts.sorted(by: { $0.key.description < $1.key.description }) {
            try ViewRows.insertConflicts(conflicts, of: entities[id]!, db)
        }
    }

    /// Lets go of `state` on another thread (see `writeViews`).
    static func freeElsewhere(_ state: consuming LedgerState) {
        final class Leftover: Sendable {
            let state: LedgerState
            init(_ state: consuming LedgerState) { self.state = state }
        }
        DispatchQueue.global(qos: .utility).async { [leftover = Leftover(consume state)] in _ = leftover }
    }

    /// Where in `entities` each entity is, in the order their rows are written: UUID ids by
    /// their bytes (the order of their text, the tables' key order), so the inserts walk each
    /// B-tree left to right; setting keys after them. Sorts 128-bit keys and dictionary
    /// positions, not the entities, which would copy (and retain) every entity's properties.
    static func inWritingOrder(_ entities: [EntityID: LedgerState.Entity]) -> [Dictionary<EntityID, LedgerState.Entity>.Index] {
        var keys: [(high: UInt64, low: UInt64, position: Dictionary<EntityID, LedgerState.Entity>.Index)] = []
        var settings: [(key: String, position: Dictionary<EntityID, LedgerState.Entity>.Index)] = []
        keys.reserveCapacity(entities.count)
        for position in entities.indices {
            let id = entities.keys[position]
            guard case .uuid(let uuid) = id else {
                settings.append((id.description, position))
                continue
            }
            let (high, low) = withUnsafeBytes(of: uuid.uuid) { ($0.loadUnaligned(as: UInt64.self).bigEndian, $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self).bigEndian) }
            keys.append((high, low, position))
        }
        keys.sort { ($0.high, $0.low) < ($1.high, $1.low) }
        settings.sort { $0.key < $1.key }
        return keys.map(\.position) + settings.map(\.position)
    }

    /// Rebuilds `directory`'s views; see the type's summary.
    public static func rebuild(_ directory: DataDirectory, verifyOnly: Bool, progress: (RebuildProgress) -> Void = { _ in }) throws -> RebuildReport {
        let start = Date()
        func report(_ phase: String, _ done: Int, _ total: Int) {
            progress(RebuildProgress(phase: phase, done: done, total: total, elapsed: Date().timeIntervalSince(start)))
        }
        let live = try Projector(directory: directory)
        let total = Int(try directory.reader.statistics().events)

        // 1. Fold the whole log in memory by the merge rules (state grows with entities, not events).
        var folded = FoldedLog()
        try directory.reader.forEachEvent { logged in
            folded.apply(logged.event)
            if logged.index % 50_000 == 0 { report("replaying", Int(logged.index), total) }
        }
        let (lastIndex, entities) = (folded.lastIndex, folded.state.entities.count)
        report("replaying", Int(lastIndex), total)

        // 2. Write the next generation from the folded state.
        let generationLock = try ProjectionDatabase.lockGenerations(directory, waiting: 600)
        defer { generationLock.release() }
        var state: LedgerState? = (consume folded).intoState()
        let (generation, path) = try ProjectionDatabase.writeNextGeneration(directory) { db in
            try writeViews(of: state.take()!, lastIndex: lastIndex, db) { report("writing views", $0, $1) }
        }

        // 3. Bring both up to the same log index (a writer may be appending meanwhile), then compare.
        let rebuilt = Projector(directory: directory, database: try DatabasePool(path: path, configuration: ProjectionDatabase.configuration()))
        var differences: [String] = []
        var rebuiltSums = ViewChecksum(tables: [])
        for attempt in 0..<5 {
            report("catching up", Int(lastIndex), total)
            try live.catchUp()
            try rebuilt.catchUp()
            let liveSums = try live.database.read { try ViewChecksum.compute($0) }
            rebuiltSums = try rebuilt.database.read { try ViewChecksum.compute($0) }
            if try live.checkpoint() == rebuilt.checkpoint() || attempt == 4 {
                differences = liveSums.differences(from: rebuiltSums)
                break
            }
        }
        try rebuilt.database.close()
        try live.database.close()

        // 4. Swap, unless only verifying.
        if verifyOnly {
            ProjectionDatabase.remove(directory, generation: generation)
        } else {
            try ProjectionDatabase.makeCurrent(directory, generation)
        }
        let liveGeneration = ProjectionDatabase.currentGeneration(directory) ?? generation
        return RebuildReport(events: Int(lastIndex), entities: entities, differences: differences, tables: rebuiltSums.tables,
                             swapped: !verifyOnly, generation: liveGeneration, seconds: Date().timeIntervalSince(start))
    }
}
