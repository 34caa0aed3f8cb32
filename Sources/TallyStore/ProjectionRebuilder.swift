import Foundation
import GRDB
import Synchronization
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
    /// The index of the snapshot the rebuild started from; nil if it replayed the whole log.
    public var startedFrom: UInt64?
}

/// Replays the whole log into a fresh database beside the live one, compares the two, and
/// swaps the fresh one in atomically (unless only verifying). The live views keep answering
/// throughout; a rebuild killed half-way leaves only a stray next-generation file, which the
/// next rebuild replaces.
public enum ProjectionRebuilder {
    /// Writes every entity of a folded state, in id order, and the checkpoint, into empty views
    /// in the caller's transaction (the expense tables' indexes built after their rows, and the
    /// running totals summed from them: `TotalsSetAside`).
    /// States are encoded and row values built on a second thread, a chunk ahead of the SQLite
    /// writes on this one. A new generation is filled by `fillNewGeneration` instead.
    ///
    /// Takes the state: once the rows are written it is freed on another thread while this one
    /// builds the indexes — for a whole ledger, freeing its entities takes a good part of a
    /// second, and the index builds use one core. (When the caller keeps a copy, the last
    /// copy's owner frees it instead.)
    public static func writeViews(of state: consuming LedgerState, lastIndex: UInt64, _ db: Database, progress: (Int, Int) -> Void = { _, _ in }) throws {
        let order = inWritingOrder(state.entities)
        let indexes = try ProjectionDatabase.dropIndexes(of: ["expenses", "expense_tags"], db)
        let totals = try TotalsSetAside.forFilling(db)
        try writeRows(of: state, in: order, withStates: true, db, progress: progress)
        freeElsewhere(consume state)
        try ProjectionDatabase.createIndexes(indexes, db)
        try totals.restore(db)
        try finish(lastIndex: lastIndex, db)
    }

    /// Fills a new generation (empty, no journal, at `path`) from a folded state, on both
    /// cores: SQLite writes one database from one thread at a time, so the entity states go
    /// into a side file from a second connection while this one writes the view rows and builds
    /// their indexes and totals; then the states are copied in whole (SQLite's transfer of a table into an
    /// identical one copies records without decoding them, a tenth of inserting them).
    static func fillNewGeneration(
        _ queue: DatabaseQueue, at path: String, from state: consuming LedgerState, lastIndex: UInt64,
        progress: (Int, Int) -> Void = { _, _ in }
    ) throws {
        let order = inWritingOrder(state.entities)
        let statesPath = path + "-states"
        ProjectionDatabase.removeFiles(at: statesPath)
        defer { ProjectionDatabase.removeFiles(at: statesPath) }
        let stateTable = try queue.read { try String.fetchOne($0, sql: "SELECT sql FROM sqlite_master WHERE name = 'entity_state'") }!
        // Neither thread keeps the entities past its own use of them, so whichever finishes last
        // frees them, and this thread never does (it has the index builds to run).
        let forStates = Handoff(state.entities)
        var owned: LedgerState? = consume state
        try runBeside(
            {
                // The lowest priority: this thread's work fits in the time the other core would idle
                // (the index builds run on one), and must not slow the row writing, which the index
                // builds wait for.
                setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)  // on Linux, 0 is the calling thread
                let entities = forStates.take()
                let side = try DatabaseQueue(path: statesPath, configuration: ProjectionDatabase.configuration())
                try side.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF") }
                try side.inTransaction { db in
                    try db.execute(sql: stateTable)
                    for position in order {
                        let entity = entities[position].value
                        try Projector.saveState(id: entity.id, type: entity.type, encoded: EntityStateCodec.encode(entity), db)
                    }
                    return .commit
                }
                try side.close()
            },
            and: {
                try queue.inTransaction { db in
                    let indexes = try ProjectionDatabase.dropIndexes(of: ["expenses", "expense_tags"], db)
                    let totals = try TotalsSetAside.forFilling(db)
                    try writeRows(of: owned!, in: order, withStates: false, db, progress: progress)
                    freeElsewhere(owned.take()!)
                    try ProjectionDatabase.createIndexes(indexes, db)
                    try totals.restore(db)
                    return .commit
                }
            })
        // The category views are made from the entity states, so only once those are in.
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "ATTACH DATABASE ? AS states", arguments: [statesPath])
            try db.inTransaction {
                try db.execute(sql: "INSERT INTO main.entity_state SELECT * FROM states.entity_state")
                try finish(lastIndex: lastIndex, db)
                return .commit
            }
            try db.execute(sql: "DETACH DATABASE states")
        }
    }

    /// A value passed to another thread that takes it once, so that no one else keeps a copy.
    private final class Handoff<Value: Sendable>: Sendable {
        private let value: Mutex<Value?>
        init(_ value: consuming Value) { self.value = Mutex(value) }
        func take() -> Value { value.withLock { $0.take()! } }
    }

    /// Runs `beside` on a new thread and `main` on this one; returns once both have, throwing
    /// the first error either threw.
    private static func runBeside(_ beside: @escaping @Sendable () throws -> Void, and main: () throws -> Void) throws {
        let done = DispatchSemaphore(value: 0)
        let failure = Mutex<(any Error)?>(nil)
        let thread = Thread {
            do { try beside() } catch { failure.withLock { $0 = error } }
            done.signal()
        }
        thread.name = "tally-states"
        thread.start()
        var mainFailure: (any Error)?
        do { try main() } catch { mainFailure = error }
        done.wait()
        if let error = mainFailure ?? failure.withLock({ $0 }) { throw error }
    }

    /// The category views (made from the entity states) and the checkpoint.
    private static func finish(lastIndex: UInt64, _ db: Database) throws {
        try CategoryViews.refresh(db)
        try ProjectionHistory.advance(to: lastIndex, db)
    }

    /// Every entity's rows (and its state, `withStates`), in `order`, and the conflicts, into
    /// empty tables.
    static func writeRows(
        of state: borrowing LedgerState, in order: [Dictionary<EntityID, LedgerState.Entity>.Index], withStates: Bool,
        _ db: Database, progress: (Int, Int) -> Void
    ) throws {
        let entities = state.entities
        let winners = try ViewRows.categoryWinners(db)
        var written = 0
        try Prefetcher<[(id: EntityID, type: EntityType, state: [UInt8], rows: ViewRows.Rows)]>.run(
            produce: { emit in
                for first in stride(from: 0, to: order.count, by: 1_024) {
                    try emit(
                        order[first..<min(first + 1_024, order.count)].map { position in
                            let entity = entities[position].value
                            return (entity.id, entity.type, withStates ? EntityStateCodec.encode(entity) : [], ViewRows.rows(of: entity, winners: winners))
                        })
                }
            },
            consume: { chunk in
                for prepared in chunk {
                    if withStates { try Projector.saveState(id: prepared.id, type: prepared.type, encoded: prepared.state, db) }
                    try ViewRows.write(from: .none, to: prepared.rows, db)
                }
                if written / 50_000 != (written + chunk.count) / 50_000 { progress(written + chunk.count, order.count) }
                written += chunk.count
            })
        var journal = ConflictJournal()
        for (id, conflicts) in state.conflicts.sorted(by: { $0.key.description < $1.key.description }) {
            try journal.add(conflicts, of: entities[id]!, db)
        }
        try journal.finish(db)
    }

    /// Lets go of `state` on another thread (see `writeViews`).
    static func freeElsewhere(_ state: consuming LedgerState) {
        DispatchQueue.global(qos: .utility).async { [leftover = Handoff(consume state)] in _ = leftover.take() }
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
            let (high, low) = withUnsafeBytes(of: uuid.uuid) {
                ($0.loadUnaligned(as: UInt64.self).bigEndian, $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self).bigEndian)
            }
            keys.append((high, low, position))
        }
        keys.sort { ($0.high, $0.low) < ($1.high, $1.low) }
        settings.sort { $0.key < $1.key }
        return keys.map(\.position) + settings.map(\.position)
    }

    /// Rebuilds `directory`'s views; see the type's summary. With `fromSnapshot`, the next
    /// generation starts as a copy of the latest good snapshot (`ViewSnapshots`) and only the
    /// events after it are replayed — quicker, but it trusts that snapshot's rows; a damaged
    /// one is passed over (`warn`) and none at all means a replay from the start.
    public static func rebuild(
        _ directory: DataDirectory, verifyOnly: Bool, fromSnapshot: Bool = false, warn: (String) -> Void = { _ in },
        progress: (RebuildProgress) -> Void = { _ in }
    ) throws -> RebuildReport {
        let start = Date()
        let startSecond = ProjectionHistory.currentSecond()
        func report(_ phase: String, _ done: Int, _ total: Int) {
            progress(RebuildProgress(phase: phase, done: done, total: total, elapsed: Date().timeIntervalSince(start)))
        }
        let live = try Projector(directory: directory)
        let total = Int(try directory.reader.statistics().events)
        let snapshots = ViewSnapshots(directory)
        let snapshot = fromSnapshot ? snapshots.latestGood(atOrBefore: UInt64(total), warn: warn) : nil

        // 1. Fold the whole log in memory by the merge rules (state grows with entities, not
        // events) — unless starting from a snapshot, which the catch-up below continues.
        var folded = FoldedLog()
        if snapshot == nil {
            try directory.reader.forEachEvent { logged in
                folded.apply(logged.event)
                if logged.index % 50_000 == 0 { report("replaying", Int(logged.index), total) }
            }
        }
        let (lastIndex, entities) = (snapshot?.index ?? folded.lastIndex, folded.state.entities.count)
        report("replaying", Int(lastIndex), total)

        // 2. Write the next generation from the folded state (or the snapshot).
        let generationLock = try ProjectionDatabase.lockGenerations(directory, waiting: 600)
        defer { generationLock.release() }
        var state: LedgerState? = (consume folded).intoState()
        let (generation, path) = try ProjectionDatabase.writeNextGeneration(directory) { queue, path in
            if let snapshot {
                try DatabaseQueue(
                    path: snapshots.databasePath(snapshot.index),
                    configuration: {
                        var c = Configuration(); c.readonly = true; return c
                    }()
                )
                .backup(to: queue)
            } else {
                try fillNewGeneration(queue, at: path, from: state.take()!, lastIndex: lastIndex) { report("writing views", $0, $1) }
            }
        }

        // 3. Bring both up to the same log index (a writer may be appending meanwhile), then compare.
        let rebuilt = Projector(directory: directory, database: try DatabasePool(path: path, configuration: ProjectionDatabase.configuration()))
        var differences: [String] = []
        var rebuiltSums = ViewChecksum(tables: [])
        // The live side's checksum is read with its checkpoint, in one transaction, and the
        // rebuilt side caught up to that index exactly: a service projecting into the live
        // views meanwhile must not make the rows it writes look like drift.
        for attempt in 0..<5 {
            report("catching up", Int(lastIndex), total)
            try live.catchUp()
            let (liveIndex, liveSums) = try live.database.read { (try Projector.checkpoint($0), try ViewChecksum.compute($0)) }
            try rebuilt.catchUp(through: liveIndex)
            let rebuiltIndex: UInt64
            (rebuiltIndex, rebuiltSums) = try rebuilt.database.read { (try Projector.checkpoint($0), try ViewChecksum.compute($0)) }
            if liveIndex == rebuiltIndex {
                differences = liveSums.differences(from: rebuiltSums)
                break
            }
            if attempt == 4 {
                warn(
                    "writes kept coming during the rebuild: the live views (at log index \(liveIndex)) and the rebuilt ones (at \(rebuiltIndex)) were never at one index, so they were not compared"
                )
            }
        }
        // The moments the replaced views reached each index (not in the log) stay with the views.
        if !verifyOnly, let replaced = ProjectionDatabase.currentPath(directory) {
            try ProjectionHistory.carryOver(from: replaced, into: rebuilt.database, before: startSecond, upTo: try rebuilt.checkpoint())
        }
        try rebuilt.database.close()
        try live.database.close()

        // A start from a snapshot that ends up unlike the live views does not say which is
        // wrong (the snapshot's rows were trusted): the whole log decides, by a full replay.
        if snapshot != nil, !differences.isEmpty {
            ProjectionDatabase.remove(directory, generation: generation)
            warn("the views rebuilt from the snapshot at log index \(lastIndex) differ from the live ones; replaying the whole log instead")
            generationLock.release()
            return try rebuild(directory, verifyOnly: verifyOnly, fromSnapshot: false, warn: warn, progress: progress)
        }

        // 4. Swap, unless only verifying.
        if verifyOnly {
            ProjectionDatabase.remove(directory, generation: generation)
        } else {
            // Writes the service projected into the old views since the comparison are in the
            // log: the new views take them just before the swap and again just after it, so
            // that a client reading its own write back finds it in the new views (it missed
            // for as long as comparing took, when the catch-up came only after the swap).
            let lastLook = Projector(directory: directory, database: try DatabasePool(path: path, configuration: ProjectionDatabase.configuration()))
            try lastLook.catchUp()
            try lastLook.database.close()
            try ProjectionDatabase.makeCurrent(directory, generation)
            try Projector(directory: directory).catchUp()
        }
        let liveGeneration = ProjectionDatabase.currentGeneration(directory) ?? generation
        return RebuildReport(
            events: Int(lastIndex), entities: entities, differences: differences, tables: rebuiltSums.tables,
            swapped: !verifyOnly, generation: liveGeneration, seconds: Date().timeIntervalSince(start), startedFrom: snapshot?.index)
    }
}
