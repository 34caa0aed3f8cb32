import Foundation
import GRDB
import TallyCore

/// Writes an entity's rows in the view tables from its merged state. Used by both the
/// incremental projector and the rebuilder, so both produce the same rows byte for byte.
/// Categories are the exception: their rows depend on all categories at once (duplicates
/// merge), so `CategoryViews.refresh` rewrites them after a batch that touched any.
enum ViewRows {
    /// Brings the entity's view rows from what `previous` (its state before this batch; nil
    /// for an entity seen for the first time, which has no rows) showed to what `entity` shows.
    /// A row that stays gets an UPDATE of only the columns that changed, so SQLite rewrites only
    /// the indexes over those columns; a row whose columns all stay is not touched.
    static func write(_ entity: LedgerState.Entity, previous: LedgerState.Entity?, _ db: Database) throws {
        switch entity.type {
        case .expense:
            let oldRow = previous.flatMap(liveExpense), newRow = liveExpense(entity)
            try writeRow(table: "expenses", columns: expenseColumnNames, old: try oldRow.map { try expenseColumns($0, db) },
                         new: try newRow.map { try expenseColumns($0, db) }, db)
            let oldTags = oldRow?.tags ?? [], newTags = newRow?.tags ?? []
            if oldTags != newTags {
                let id = entity.id.description
                try db.cachedStatement(sql: "DELETE FROM expense_tags WHERE expense_id = ?").execute(arguments: [id])
                let insert = try db.cachedStatement(sql: "INSERT INTO expense_tags (expense_id, tag) VALUES (?, ?)")
                for tag in newTags { try insert.execute(arguments: [id, tag]) }
            }
        case .category:
            break
        case .todo:
            try writeRow(table: "todos", columns: todoColumnNames, old: previous.flatMap(todoColumns), new: todoColumns(entity), db)
        case .setting:
            let scope = entity.isLocalOnly ? "local" : "replicated"
            let key = entity.id.description
            try db.cachedStatement(sql: "DELETE FROM settings WHERE scope = ? AND key = ?").execute(arguments: [scope, key])
            guard entity.isLive, case .json(let value)? = entity.values[.value] else { return }
            try db.cachedStatement(sql: "INSERT INTO settings (scope, key, value) VALUES (?, ?, ?)").execute(arguments: [scope, key, value])
        }
    }

    /// Inserts, deletes or updates one row keyed by its first column (values in `columns` order).
    static func writeRow(table: String, columns: [String], old: [DatabaseValue]?, new: [DatabaseValue]?, _ db: Database) throws {
        switch (old, new) {
        case (nil, nil):
            return
        case (nil, let new?):
            try db.cachedStatement(sql: insertSQL(table: table, columns: columns)).execute(arguments: StatementArguments(new))
        case (let old?, nil):
            try db.cachedStatement(sql: "DELETE FROM \(table) WHERE \(columns[0]) = ?").execute(arguments: [old[0]])
        case (let old?, let new?):
            let changed = columns.indices.dropFirst().filter { old[$0] != new[$0] }
            guard !changed.isEmpty else { return }
            let assignments = changed.map { "\(columns[$0]) = ?" }.joined(separator: ", ")
            try db.cachedStatement(sql: "UPDATE \(table) SET \(assignments) WHERE \(columns[0]) = ?")
                .execute(arguments: StatementArguments(changed.map { new[$0] } + [new[0]]))
        }
    }

    /// `INSERT INTO table (columns…) VALUES (?…)`, built once per table (it is the statement cache's key).
    static func insertSQL(table: String, columns: [String]) -> String {
        switch table {
        case "expenses": expenseInsertSQL
        case "todos": todoInsertSQL
        default: "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
        }
    }

    static let expenseInsertSQL = "INSERT INTO expenses (\(expenseColumnNames.joined(separator: ", "))) VALUES (\(expenseColumnNames.map { _ in "?" }.joined(separator: ", ")))"
    static let todoInsertSQL = "INSERT INTO todos (\(todoColumnNames.joined(separator: ", "))) VALUES (\(todoColumnNames.map { _ in "?" }.joined(separator: ", ")))"

    static let expenseColumnNames = ["id", "kind", "amount", "currency", "date", "date_ms", "month", "category_ref", "category_id",
                                     "payment", "memo", "tags", "repeat", "attachments"]

    static func liveExpense(_ entity: LedgerState.Entity) -> ExpenseRow? {
        entity.isLive ? ExpenseRow(entity) : nil
    }

    /// The expense's row, in `expenseColumnNames` order. `category_id`
    /// is the category that stands for the one written (`category_ref`): itself, or its winner.
    static func expenseColumns(_ row: ExpenseRow, _ db: Database) throws -> [DatabaseValue] {
        var shownCategory = row.categoryId
        if let written = row.categoryId {
            shownCategory = try String.fetchOne(db.cachedStatement(sql: "SELECT winner_id FROM category_merges WHERE loser_id = ?"),
                                                arguments: [written]) ?? written
        }
        return [row.id.databaseValue, row.kind.databaseValue, row.amount.databaseValue, row.currency.databaseValue,
                row.date.databaseValue, row.dateMillis.databaseValue, row.month.databaseValue, row.categoryId.databaseValue,
                shownCategory.databaseValue, row.payment.databaseValue, row.memo.databaseValue,
                JSONText.array(row.tags.map(JSONText.string)).serialized.databaseValue, row.repeat.databaseValue,
                JSONText.array(row.attachments.map(JSONText.string)).serialized.databaseValue]
    }

    static let todoColumnNames = ["id", "title", "memo", "start_date", "end_date", "checks", "checks_done", "percentage", "is_challenge",
                                  "is_completed", "attachments"]

    /// The to-do's row, in `todoColumnNames` order; nil when it shows no row.
    static func todoColumns(_ entity: LedgerState.Entity) -> [DatabaseValue]? {
        guard entity.isLive, let row = TodoRow(entity) else { return nil }
        return [row.id.databaseValue, row.title.databaseValue, row.memo.databaseValue, row.startDate.databaseValue,
                row.endDate.databaseValue, JSONText.array(row.checks.map(JSONText.bool)).serialized.databaseValue,
                row.checks.filter { $0 }.count.databaseValue, row.percentage.databaseValue, row.isChallenge.databaseValue,
                row.isCompleted.databaseValue, JSONText.array(row.attachments.map(JSONText.string)).serialized.databaseValue]
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
}
