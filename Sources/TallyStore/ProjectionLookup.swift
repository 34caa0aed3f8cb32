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

    public func liveReplicatedSettings() throws -> [LedgerState.Entity] {
        try String.fetchAll(db, sql: "SELECT key FROM settings WHERE scope = 'replicated'").compactMap {
            try Projector.loadState(id: .settingKey($0), db)
        }
    }
}
