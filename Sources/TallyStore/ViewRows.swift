import Foundation
import GRDB
import TallyCore

/// Writes an entity's rows in the view tables from its merged state. Used by both the
/// incremental projector and the rebuilder, so both produce the same rows byte for byte.
/// Categories are the exception: their rows depend on all categories at once (duplicates
/// merge), so `CategoryViews.refresh` rewrites them after a batch that touched any.
enum ViewRows {
    /// Replaces the entity's view rows with what its state says (none if it is not live).
    /// `hasRows: false` (an entity seen for the first time) skips deleting rows that cannot exist.
    static func write(_ entity: LedgerState.Entity, _ db: Database, hasRows: Bool = true) throws {
        let id = entity.id.description
        switch entity.type {
        case .expense:
            if hasRows {
                try db.cachedStatement(sql: "DELETE FROM expense_tags WHERE expense_id = ?").execute(arguments: [id])
                try db.cachedStatement(sql: "DELETE FROM expenses WHERE id = ?").execute(arguments: [id])
            }
            guard entity.isLive, let row = ExpenseRow(entity) else { return }
            try insertExpense(row, db)
        case .category:
            break
        case .todo:
            if hasRows { try db.cachedStatement(sql: "DELETE FROM todos WHERE id = ?").execute(arguments: [id]) }
            guard entity.isLive, let row = TodoRow(entity) else { return }
            try insertTodo(row, db)
        case .setting:
            let scope = entity.isLocalOnly ? "local" : "replicated"
            try db.cachedStatement(sql: "DELETE FROM settings WHERE scope = ? AND key = ?").execute(arguments: [scope, id])
            guard entity.isLive, case .json(let value)? = entity.values[.value] else { return }
            try db.cachedStatement(sql: "INSERT INTO settings (scope, key, value) VALUES (?, ?, ?)").execute(arguments: [scope, id, value])
        }
    }

    static func insertExpense(_ row: ExpenseRow, _ db: Database) throws {
        let statement = try db.cachedStatement(sql: """
            INSERT INTO expenses (id, kind, amount, currency, date, date_ms, month, category_ref, category_id, payment, memo, tags, repeat, attachments)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, COALESCE((SELECT winner_id FROM category_merges WHERE loser_id = ?8), ?8), ?, ?, ?, ?, ?)
            """)
        try statement.execute(arguments: [row.id, row.kind, row.amount, row.currency, row.date, row.dateMillis, row.month,
                                          row.categoryId, row.payment, row.memo, JSONText.array(row.tags.map(JSONText.string)).serialized,
                                          row.repeat, JSONText.array(row.attachments.map(JSONText.string)).serialized])
        let tag = try db.cachedStatement(sql: "INSERT INTO expense_tags (expense_id, tag) VALUES (?, ?)")
        for name in row.tags { try tag.execute(arguments: [row.id, name]) }
    }

    /// Adds conflicts to the journal (which only ever grows; a conflict found again is kept once).
    static func insertConflicts(_ conflicts: [LedgerState.Conflict], of entity: LedgerState.Entity, _ db: Database) throws {
        let id = entity.id.description
        let insert = try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO conflicts (entity_id, entity_type, property, loser_hlc, loser_origin, losing_value, winner_hlc, winner_origin, winning_value)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for conflict in conflicts {
            try insert.execute(arguments: [
                id, entity.type.description, conflict.property.jsonName, conflict.loser.timestamp.description, conflict.loser.origin.description,
                conflict.losingValue.json.serialized, conflict.winner.timestamp.description, conflict.winner.origin.description,
                conflict.winningValue.json.serialized,
            ])
        }
    }

    static func insertTodo(_ row: TodoRow, _ db: Database) throws {
        try db.cachedStatement(sql: """
            INSERT INTO todos (id, title, memo, start_date, end_date, checks, checks_done, percentage, is_challenge, is_completed, attachments)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [row.id, row.title, row.memo, row.startDate, row.endDate, JSONText.array(row.checks.map(JSONText.bool)).serialized,
                             row.checks.filter { $0 }.count, row.percentage, row.isChallenge, row.isCompleted,
                             JSONText.array(row.attachments.map(JSONText.string)).serialized])
    }
}
