import GRDB
import TallyCore

/// `WriteRules`' view of the ledger, read from the projection database's `entity_state`
/// (so checking a write costs a few indexed reads, not a scan of the log).
public struct ProjectionLookup: LedgerLookup {
    let db: Database

    /// Looks up in `db`.
    public init(_ db: Database) { self.db = db }

    public func entity(_ id: EntityID) throws -> LedgerState.Entity? {
        try Projector.loadState(id: id, db)
    }

    /// One query per 500 ids (a statement's parameters are bounded); only the full-size
    /// statement is cached, so a connection keeps one of them, not one per chunk size. Asked
    /// about more ids than the ledger has ever held (a first import into a young ledger), it
    /// reads the ledger's ids instead: cheaper than asking about each.
    public func held(among ids: [EntityID]) throws -> Set<EntityID> {
        // Counted only up to `ids.count`: a full count would read every state of a large ledger.
        if ids.count > 500,
            try Int.fetchOne(db, sql: "SELECT count(*) FROM (SELECT 1 FROM entity_state LIMIT ?)", arguments: [ids.count]) ?? 0 < ids.count
        {
            let asked = Set(ids)
            var held: Set<EntityID> = []
            let everHeld = try String.fetchCursor(db, sql: "SELECT id FROM entity_state")
            while let text = try everHeld.next() {
                let id = EntityID(parsing: text)
                if asked.contains(id) { held.insert(id) }
            }
            return held
        }
        var held: Set<EntityID> = []
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = ids[start..<min(start + 500, ids.count)]
            let sql = "SELECT id FROM entity_state WHERE id IN (\(repeatElement("?", count: chunk.count).joined(separator: ",")))"
            let statement = try chunk.count == 500 ? db.cachedStatement(sql: sql) : db.makeStatement(sql: sql)
            let named = Dictionary(chunk.map { ($0.description, $0) }, uniquingKeysWith: { first, _ in first })
            for text in try String.fetchAll(statement, arguments: StatementArguments(chunk.map(\.description))) {
                if let id = named[text] { held.insert(id) }
            }
        }
        return held
    }

    public func liveReplicatedSettings() throws -> [LedgerState.Entity] {
        try String.fetchAll(db, sql: "SELECT key FROM settings WHERE scope = 'replicated'").compactMap {
            try Projector.loadState(id: .settingKey($0), db)
        }
    }
}
