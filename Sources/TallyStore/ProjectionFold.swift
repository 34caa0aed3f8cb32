import GRDB
import TallyCore
import TallyLog

/// Events folded per entity inside one projection transaction: each entity the events touch
/// is loaded once, has its events applied in log order, and is stored and re-rendered once
/// (`write`). An entity's state depends only on its own events, so this gives exactly the rows
/// that applying the events one at a time would, with one write per entity instead of one per
/// event.
struct ProjectionFold {
    /// The log index reached: the checkpoint `write` stores.
    private(set) var last: UInt64
    /// Events applied (those at or before the checkpoint are skipped: applying twice is harmless).
    private(set) var applied = 0
    private var categoriesChanged = false
    private var touched: [EntityID: LedgerState.Entity] = [:]
    private var before: [EntityID: LedgerState.Entity] = [:]  // stored states of the touched entities that had one
    private var conflicts: [EntityID: [LedgerState.Conflict]] = [:]

    /// Starts at the views' checkpoint (read in the caller's transaction).
    init(_ db: Database) throws {
        last = try Projector.checkpoint(db)
    }

    var entityCount: Int { touched.count }

    /// Folds in the next event of the log (in order; the one after `last`).
    mutating func add(_ logged: LoggedEvent, _ db: Database) throws {
        guard logged.index > last else { return }
        guard logged.index == last + 1 else {
            throw LogError.rejected(reason: "projection expects log index \(last + 1), got \(logged.index)")
        }
        let event = logged.event
        if touched[event.entityID] == nil {
            let stored = try Projector.loadState(id: event.entityID, db)
            before[event.entityID] = stored
            touched[event.entityID] = stored ?? LedgerState.Entity(first: event)
        }
        let found = touched[event.entityID]!.apply(event)
        if !found.isEmpty { conflicts[event.entityID, default: []] += found }
        categoriesChanged = categoriesChanged || event.entityType == .category
        last = logged.index
        applied += 1
    }

    /// Stores every touched entity's state and rows, the conflicts found, the category views
    /// if a category changed, and the checkpoint.
    func write(_ db: Database) throws {
        // A bulk (a first import into a young ledger, a long catch-up) writes more rows than
        // the tables hold: their indexes are made again after the rows instead of updated per row.
        let aside = touched.count >= Self.bulkEntities ? try IndexesSetAside.forWriting(rows: touched.count, db) : IndexesSetAside()
        // In id order, so the writes walk each B-tree once instead of jumping around it (the
        // order of positions, not a sorted copy of the entities, which retained each at every move).
        let winners = try ViewRows.categoryWinners(db)
        var journal = ConflictJournal()
        for position in ProjectionRebuilder.inWritingOrder(touched) {
            let (id, entity) = touched[position]
            try Projector.saveState(entity, db)
            try ViewRows.write(
                from: before[id].map { ViewRows.rows(of: $0, winners: winners) } ?? .none,
                to: ViewRows.rows(of: entity, winners: winners), db)
            if let found = conflicts[id] { try journal.add(found, of: entity, db) }
        }
        try journal.finish(db)
        try aside.restore(db)
        if categoriesChanged { try CategoryViews.refresh(db) }
        try ProjectionHistory.advance(to: last, db)
    }

    /// From this many entities on, `write` sets aside the indexes of the tables they outnumber.
    static let bulkEntities = 10_000
}
