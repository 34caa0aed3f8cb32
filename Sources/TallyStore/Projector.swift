import Foundation
import GRDB
import TallyCore
import TallyLog

/// Keeps the views in step with the log. Each batch of events is applied in one SQLite
/// transaction together with the checkpoint (the log index it reaches), so every event is
/// applied exactly once across crashes, restarts and several processes doing it at once.
public struct Projector: Sendable {
    /// The replica.
    public let directory: DataDirectory
    /// The views, for reads: the generation in use, which moves to the current one (after a
    /// rebuild or a first load) at the next catch-up, apply or `checkpoint()`.
    public var database: DatabasePool { views.pool }
    let views: CurrentViews  // internal, not private: a test holds its writer
    /// How far this projector has taken the views, for whoever waits for news (change feeds).
    public let progress = ProjectionProgress()
    /// Events in the first transaction of a catch-up: a short lag commits quickly (and a kill
    /// mid-way keeps it). After it, a catch-up folds events per entity across as many events as
    /// come (`ProjectionFold`), so an entity edited many times — a peer's long history of edits
    /// — is loaded and written once, not once per batch; a transaction commits when it holds
    /// `largestFold` entities (memory grows with the entities in a fold, not with events) or
    /// `longestFold` events (a few seconds of work at most: the service's own writes wait for
    /// their projection meanwhile).
    public var firstBatch = 2_000
    public var largestFold = 200_000
    public var longestFold = 500_000
    /// A first load of at least this many events writes a new generation of the views (no
    /// journal, then one fsync) and points the link at it; a smaller one writes in place, in
    /// one WAL transaction — cheaper than creating a file when there is little to write.
    public var freshGenerationFrom: UInt64 = 20_000

    /// Opens (creating if needed) the replica's views, keeping `connections` to them.
    public init(directory: DataDirectory, connections: ViewConnections = ViewConnections()) throws {
        self.directory = directory
        views = try CurrentViews(directory: directory, connections: connections)
    }

    /// Opens the views at a given database (rebuilds use this on the next generation).
    init(directory: DataDirectory, database: DatabasePool) {
        self.directory = directory
        views = CurrentViews(fixed: database)
    }

    /// Runs `body` on the views in use outside any transaction (each statement sees the views
    /// as they are when it runs), on a read-only connection of its own (a write's own reads in
    /// views that keep few connections: maybe on the writer, `CurrentViews.readingForAWrite`):
    /// for a request's read of one statement, or checks that need no common snapshot.
    public func readDirectly<T>(_ body: (Database) throws -> T) throws -> T { try views.readDirectly(body) }

    /// Closes idle connections to the views and empties caches (a hosted ledger left idle
    /// while open); the next use opens what it needs again.
    public func releaseMemory() { views.releaseMemory() }

    /// Closes its connections to the views, leaving the WAL checkpointed and empty
    /// (`CurrentViews.close`); reads and writes after this fail.
    public func close() { views.close() }

    /// The log index the views reflect.
    public func checkpoint() throws -> UInt64 {
        try views.followingLink().read { try Self.checkpoint($0) }
    }

    /// The log index the views reflect, read as a query reads them (`readDirectly`), once the
    /// link has been followed: what a read asks, which opens no reader of the pool for it (a
    /// hosted ledger's open did, parsing the schema a third time, for this one number).
    public func checkpointDirectly() throws -> UInt64 {
        _ = views.followingLink()
        return try views.readDirectly { try Self.checkpoint($0) }
    }

    /// The log index the views reflect, read on the connection that writes them: what a
    /// ledger's open reads, so that opening views already caught up opens no reader (each new
    /// connection parses the schema: a quarter of a millisecond).
    public func checkpointOnWriter() throws -> UInt64 {
        try views.followingLink().writeWithoutTransaction { try Self.checkpoint($0) }
    }

    /// The log index these views showed at the end of `second` (Unix seconds): 0 before they
    /// first projected anything (`ProjectionHistory`).
    public func index(atEndOf second: Int64) throws -> UInt64 {
        try views.followingLink().read { try ProjectionHistory.index(atEndOf: second, $0) }
    }

    /// Read twice by every apply: a statement kept prepared (parsing it was two thirds of its cost).
    static func checkpoint(_ db: Database) throws -> UInt64 {
        UInt64(try Int64.fetchOne(try db.cachedStatement(sql: "SELECT last_index FROM projection_checkpoint WHERE id = 1")) ?? 0)
    }

    /// Applies every event the views have not seen yet — up to log index `through`, if given —
    /// and returns how many it applied. Empty views are filled by a first load (of the whole
    /// log, `through` or not), which starts from `folded` when given (the log's first events,
    /// already folded by whoever wrote them) and reads only the events after it.
    @discardableResult
    public func catchUp(startingFrom folded: consuming FoldedLog? = nil, through last: UInt64 = .max, progress: (Int) -> Void = { _ in }) throws -> Int {
        if try checkpoint() == 0, let loaded = try loadIntoEmptyViews(startingFrom: (consume folded) ?? FoldedLog()) {
            progress(loaded)
            return loaded
        }
        var applied = 0
        // The writer may be held for seconds: a write's reads meanwhile open a reader (`CurrentViews.writing`).
        try views.writing {
            try views.followingLink().writeWithoutTransaction { db in
                var fold: ProjectionFold?
                func commit() throws {
                    guard let finished = fold else { return }
                    fold = nil
                    try finished.write(db)
                    let reached = try Self.checkpoint(db)
                    try db.commit()
                    self.progress.advanced(to: reached)
                    applied += finished.applied
                    progress(applied)
                }
                do {
                    try directory.reader.forEachEventChunk(from: try Self.checkpoint(db) + 1) { chunk in
                        for logged in chunk {
                            guard logged.index <= last else { throw ReachedLast() }
                            if fold == nil {
                                try db.beginTransaction(.immediate)
                                fold = try ProjectionFold(db)
                            }
                            try fold!.add(logged, db)
                            if fold!.entityCount >= largestFold || fold!.applied >= (applied == 0 ? firstBatch : longestFold) { try commit() }
                        }
                    }
                    try commit()
                } catch is ReachedLast {
                    try commit()
                } catch {
                    if db.isInsideTransaction { try? db.rollback() }
                    throw error
                }
            }
        }
        return applied
    }

    /// Brings the views up to the log after a bulk append that reached log index `last`. When
    /// the events not projected yet outnumber those projected (a first import of years of
    /// statements into a young ledger, a decade of a rule's occurrences), it writes a new
    /// generation of the views from the whole log folded — a first load's way: each entity
    /// written once, in id order, the indexes made after the rows, no journal — which becomes
    /// the current one, keeping the history of the one it replaces; otherwise it catches up
    /// (`catchUp`). Returns how many events the views moved on by.
    ///
    /// Writes projected into the replaced generation meanwhile are in the log: the new one
    /// catches up from where its fold ended (lost work, not lost data, as for a first load).
    ///
    /// `startingFrom`: the log's first events already folded (a delivery folded as it arrived,
    /// `StreamReceiver.takeFolded`); only the events after them are read.
    @discardableResult
    public func catchUpInBulk(through last: UInt64, startingFrom given: consuming FoldedLog? = nil) throws -> Int {
        let projected = try checkpoint()
        guard last > projected, last - projected >= max(projected, freshGenerationFrom),
            let lock = try ProjectionDatabase.lockGenerations(directory)  // else a rebuild or a first load is writing one
        else {
            given = nil  // not held through the catch-up
            return try catchUp()
        }
        defer { lock.release() }
        let startSecond = ProjectionHistory.currentSecond()
        var folded = (consume given) ?? FoldedLog(expecting: last)
        try directory.reader.forEachEventChunk(from: folded.lastIndex + 1) { chunk in
            for logged in chunk { folded.apply(logged.event) }
        }
        let reached = folded.lastIndex
        var state: LedgerState? = (consume folded).intoState()
        let number = (ProjectionDatabase.currentGeneration(directory) ?? 0) + 1
        do {
            let next = try ProjectionDatabase.writeNextGeneration(directory) { queue, path in
                try ProjectionRebuilder.fillNewGeneration(queue, at: path, from: state.take()!, lastIndex: reached)
            }
            // The replaced generation's history, and what was appended meanwhile, before the
            // swap: a write acknowledged while the new views were written reads back at once.
            let pool = try DatabasePool(path: next.path, configuration: ProjectionDatabase.configuration())
            defer { try? pool.close() }
            if let replaced = ProjectionDatabase.currentPath(directory) {
                try ProjectionHistory.carryOver(from: replaced, into: pool, before: startSecond, upTo: reached)
            }
            try Projector(directory: directory, database: pool).catchUp()
        } catch {
            ProjectionDatabase.remove(directory, generation: number)  // a full copy of the views left half-written
            throw error
        }
        try ProjectionDatabase.makeCurrent(directory, number)
        _ = views.followingLink()
        progress.advanced(to: reached)
        try catchUp()
        let now = try checkpoint()
        return now > projected ? Int(now - projected) : 0
    }

    /// Ends a catch-up's read of the log at its `through` index.
    private struct ReachedLast: Error {}

    /// A replica's first projection (its views are empty, as after `tally init` and a first
    /// sync): folds the whole log in memory and writes every entity's rows once, in id order,
    /// indexes built after the rows — what a rebuild does, in one transaction. Memory grows with
    /// entities, not events; a kill keeps nothing of it and the next catch-up starts over.
    /// Returns nil, having written nothing, if another process projected first.
    ///
    /// From `freshGenerationFrom` events on, the rows go into a new generation, which then
    /// becomes the current one, unless a rebuild or another first load is writing one (then in
    /// place). An incremental projector that got in meanwhile wrote into the old generation;
    /// that is lost work, not lost data: the new generation is consistent with its checkpoint,
    /// and whoever follows the link catches up from the log from there.
    func loadIntoEmptyViews(startingFrom folded: consuming FoldedLog) throws -> Int? {
        var folded = consume folded
        try directory.reader.forEachEventChunk(from: folded.lastIndex + 1) { chunk in
            for logged in chunk { folded.apply(logged.event) }
        }
        let last = folded.lastIndex
        guard last > 0 else { return 0 }
        if last >= freshGenerationFrom, let lock = try ProjectionDatabase.lockGenerations(directory) {
            defer { lock.release() }
            guard try checkpoint() == 0 else { return nil }
            var state: LedgerState? = (consume folded).intoState()
            let next = try ProjectionDatabase.writeNextGeneration(directory) { queue, path in
                try ProjectionRebuilder.fillNewGeneration(queue, at: path, from: state.take()!, lastIndex: last)
            }
            try ProjectionDatabase.makeCurrent(directory, next.number)
            _ = views.followingLink()
            progress.advanced(to: last)
            return Int(last)
        }
        let loaded = try views.writing {
            try views.followingLink().writeWithoutTransaction { db in
                var loaded: Int?
                try db.inTransaction(.immediate) {
                    guard try Self.checkpoint(db) == 0 else { return .rollback }
                    try ProjectionRebuilder.writeViews(of: folded.state, lastIndex: last, db)
                    loaded = Int(last)
                    return .commit
                }
                return loaded
            }
        }
        if loaded != nil { progress.advanced(to: last) }
        return loaded
    }

    /// What an `apply` did: how many events it applied, and the checkpoint of the views in
    /// use once it committed (read on a writer's connection: no reader is needed).
    public struct Applied: Sendable {
        public let count: Int
        public let checkpoint: UInt64
    }

    /// Applies events (in log order, contiguous) that follow the checkpoint; events at or
    /// before it are skipped, so applying twice is harmless.
    ///
    /// The checkpoint returned is that of the views in use once it committed. A rebuild may
    /// swap in a generation meanwhile, and another thread may have moved to it having seen
    /// the views before this commit, so without these events: the link is followed again
    /// after the commit, and if the views in use are no longer those written, their own
    /// checkpoint is returned (behind these events: the caller projects them again, there).
    @discardableResult
    public func apply(_ events: [LoggedEvent]) throws -> Applied {
        let written = views.followingLink()
        // Not under `CurrentViews.writing`: a write's reads wait behind an apply, which is short,
        // rather than open readers whenever one is under way (see there).
        var applied = try written.writeWithoutTransaction { db in
            var count = 0
            if !events.isEmpty {
                try db.inTransaction(.immediate) {
                    count = try Self.applyBatch(events, db)
                    return .commit
                }
            }
            return Applied(count: count, checkpoint: try Self.checkpoint(db))
        }
        let inUse = views.followingLink()
        if inUse !== written { applied = Applied(count: applied.count, checkpoint: try inUse.writeWithoutTransaction { try Self.checkpoint($0) }) }
        progress.advanced(to: applied.checkpoint)
        return applied
    }

    /// The body of one projection transaction: the events after the checkpoint, folded per
    /// entity (`ProjectionFold`), the category views if any category changed, and the new
    /// checkpoint.
    static func applyBatch(_ events: [LoggedEvent], _ db: Database) throws -> Int {
        var fold = try ProjectionFold(db)
        for logged in events { try fold.add(logged, db) }
        try fold.write(db)
        return fold.applied
    }

    static func loadState(id: EntityID, _ db: Database) throws -> LedgerState.Entity? {
        let statement = try db.cachedStatement(sql: "SELECT state FROM entity_state WHERE id = ?")
        guard let blob = try Data.fetchOne(statement, arguments: [id.description]) else { return nil }
        return try EntityStateCodec.decode(Array(blob), id: id)
    }

    /// Stores an entity's merge state.
    static func saveState(_ entity: LedgerState.Entity, _ db: Database) throws {
        try saveState(id: entity.id, type: entity.type, encoded: EntityStateCodec.encode(entity), db)
    }

    /// Stores a merge state already encoded by `EntityStateCodec`.
    static func saveState(id: EntityID, type: EntityType, encoded: [UInt8], _ db: Database) throws {
        let statement = try db.cachedStatement(sql: "INSERT OR REPLACE INTO entity_state (id, type, state) VALUES (?, ?, ?)")
        try DirectStatement.execute(statement, [id.description.databaseValue, Int(type.rawValue).databaseValue, Data(encoded).databaseValue], db)
    }
}
