import Foundation
import GRDB
import TallyCore

/// An entity's rows in the view tables, computed from its merged state, and how the tables go
/// from one entity's old rows to its new ones. Used by both the incremental projector and the
/// first load / rebuild, so all produce the same rows byte for byte. Categories are the
/// exception: their rows depend on all categories at once (duplicates merge), so
/// `CategoryViews.refresh` rewrites them after a batch that touched any.
enum ViewRows {
    /// One entity's rows as column values. Computing them needs no database (only who stands
    /// for which merged category), so a first load prepares them on a second thread.
    struct Rows: Sendable, Equatable {
        /// `expenses` row, in `ViewTable.expenses.columns` order.
        var expense: [DatabaseValue]?
        /// `expense_tags` rows of that expense.
        var tags: [String] = []
        /// `todos` row, in `ViewTable.todos.columns` order.
        var todo: [DatabaseValue]?
        /// `settings` row: scope, key, value.
        var setting: [DatabaseValue]?
        /// `budgets` row, in `ViewTable.budgets.columns` order.
        var budget: [DatabaseValue]?
        /// `accounts` and `transfers` rows, in their tables' column order.
        var account: [DatabaseValue]?
        var transfer: [DatabaseValue]?
        var settlement: [DatabaseValue]?
        var line: [DatabaseValue]?

        /// An entity that shows nothing (never seen, deleted, or missing a required property).
        static let none = Rows()
    }

    /// Who stands for each merged category (`category_merges`: loser → winner).
    static func categoryWinners(_ db: Database) throws -> [String: String] {
        Dictionary(
            uniqueKeysWithValues: try Row.fetchAll(try db.cachedStatement(sql: "SELECT loser_id, winner_id FROM category_merges")).map {
                ($0["loser_id"] as String, $0["winner_id"] as String)
            })
    }

    /// The rows `entity` shows. An expense's `category_id` is the category that stands for the
    /// one written (`category_ref`): itself, or the winner `winners` names.
    static func rows(of entity: LedgerState.Entity, winners: [String: String]) -> Rows {
        guard entity.isLive else { return .none }
        var rows = Rows()
        switch entity.type {
        case .expense:
            guard let row = ViewTable.expenses.values(of: entity, winners: winners) else { return .none }
            rows.expense = row
            if case .strings(let tags)? = entity.value(.tags) { rows.tags = tags }
        case .todo:
            rows.todo = ViewTable.todos.values(of: entity, winners: winners)
        case .budget:
            rows.budget = ViewTable.budgets.values(of: entity, winners: winners)
        case .account:
            rows.account = ViewTable.accounts.values(of: entity, winners: winners)
        case .transfer:
            rows.transfer = ViewTable.transfers.values(of: entity, winners: winners)
        case .settlement:
            rows.settlement = ViewTable.settlements.values(of: entity, winners: winners)
        case .line:
            rows.line = ViewTable.lines.values(of: entity, winners: winners)
        case .category, .recurring, .importBatch, .rule, .rate:
            // Categories: `CategoryViews`. Recurring rules have no table: they are read from
            // `entity_state`, and their occurrences are ordinary expenses.
            break
        case .setting:
            guard case .json(let value)? = entity.value(.value) else { return .none }
            rows.setting = [(entity.isLocalOnly ? "local" : "replicated").databaseValue, entity.id.description.databaseValue, value.databaseValue]
        }
        return rows
    }

    /// Brings the view tables from one entity's `old` rows to its `new` ones. A row that stays
    /// gets an UPDATE of only the columns that changed, so SQLite rewrites only the indexes over
    /// those columns; a row whose columns all stay is not touched.
    static func write(from old: Rows, to new: Rows, _ db: Database) throws {
        try writeRow(ViewTable.expenses, old: old.expense, new: new.expense, db)
        if old.tags != new.tags, let id = (new.expense ?? old.expense)?[0] {
            // Rows to delete exist only if the old rows had tags (a first load never does).
            if !old.tags.isEmpty { try db.cachedStatement(sql: "DELETE FROM expense_tags WHERE expense_id = ?").execute(arguments: [id]) }
            let insert = try db.cachedStatement(sql: "INSERT INTO expense_tags (expense_id, tag) VALUES (?, ?)")
            for tag in new.tags { try DirectStatement.execute(insert, [id, tag.databaseValue], db) }
        }
        try writeRow(ViewTable.todos, old: old.todo, new: new.todo, db)
        try writeRow(ViewTable.budgets, old: old.budget, new: new.budget, db)
        try writeRow(ViewTable.accounts, old: old.account, new: new.account, db)
        try writeRow(ViewTable.transfers, old: old.transfer, new: new.transfer, db)
        try writeRow(ViewTable.settlements, old: old.settlement, new: new.settlement, db)
        try writeRow(ViewTable.lines, old: old.line, new: new.line, db)
        if old.setting != new.setting {
            if let old = old.setting {
                try db.cachedStatement(sql: "DELETE FROM settings WHERE scope = ? AND key = ?").execute(arguments: [old[0], old[1]])
            }
            if let new = new.setting {
                try db.cachedStatement(sql: "INSERT INTO settings (scope, key, value) VALUES (?, ?, ?)").execute(arguments: StatementArguments(new))
            }
        }
    }

    /// Inserts, deletes or updates one row keyed by its first column (values in `columns` order).
    static func writeRow(_ table: ViewTable, old: [DatabaseValue]?, new: [DatabaseValue]?, _ db: Database) throws {
        let columns = table.columnNames
        switch (old, new) {
        case (nil, nil):
            return
        case (nil, let new?):
            try DirectStatement.execute(try db.cachedStatement(sql: table.insertSQL), new, db)
        case (let old?, nil):
            try db.cachedStatement(sql: "DELETE FROM \(table.name) WHERE \(columns[0]) = ?").execute(arguments: [old[0]])
        case (let old?, let new?):
            let changed = columns.indices.dropFirst().filter { old[$0] != new[$0] }
            guard !changed.isEmpty else { return }
            let assignments = changed.map { "\(columns[$0]) = ?" }.joined(separator: ", ")
            try DirectStatement.execute(
                try db.cachedStatement(sql: "UPDATE \(table.name) SET \(assignments) WHERE \(columns[0]) = ?"),
                changed.map { new[$0] } + [new[0]], db)
        }
    }
}

/// Conflicts on their way into the journal (which only ever grows; a conflict found again is
/// kept once), written `rowsPerStatement` rows to an `INSERT`: a merge of two busy replicas
/// journals hundreds of thousands (`tally-bench merge`: 950,000 on one side), and one
/// statement per row was most of their cost. Values are bound through the C API
/// (`DirectStatement`); GRDB's argument copies were the rest. Call `finish` before the
/// transaction commits.
struct ConflictJournal {
    static let rowsPerStatement = 100
    private static let columns = 9
    private var values: [DatabaseValue] = []
    private var origins = ViewRows.OriginNames()

    init() { values.reserveCapacity(Self.rowsPerStatement * Self.columns) }

    /// Adds `entity`'s conflicts (written once a statement's worth is waiting).
    mutating func add(_ conflicts: [LedgerState.Conflict], of entity: LedgerState.Entity, _ db: Database) throws {
        let id = entity.id.description.databaseValue, type = entity.type.description.databaseValue
        for conflict in conflicts {
            values += [
                id, type, conflict.property.jsonName.databaseValue, conflict.loser.timestamp.description.databaseValue,
                origins.name(of: conflict.loser.origin), conflict.losingValue.json.serialized.databaseValue,
                conflict.winner.timestamp.description.databaseValue, origins.name(of: conflict.winner.origin),
                conflict.winningValue.json.serialized.databaseValue,
            ]
            if values.count == Self.rowsPerStatement * Self.columns { try write(db) }
        }
    }

    /// Writes what is waiting.
    mutating func finish(_ db: Database) throws { try write(db) }

    private mutating func write(_ db: Database) throws {
        guard !values.isEmpty else { return }
        let rows = values.count / Self.columns
        let row = "(" + repeatElement("?", count: Self.columns).joined(separator: ",") + ")"
        let sql = """
            INSERT OR IGNORE INTO conflicts (entity_id, entity_type, property, loser_hlc, loser_origin, losing_value, winner_hlc, winner_origin, winning_value)
            VALUES \(repeatElement(row, count: rows).joined(separator: ","))
            """
        // Only the full-size statement is kept: the last, shorter one of each transaction is not.
        let statement = try rows == Self.rowsPerStatement ? db.cachedStatement(sql: sql) : db.makeStatement(sql: sql)
        try DirectStatement.execute(statement, values, db)
        values.removeAll(keepingCapacity: true)
    }
}

extension ViewRows {
    /// Replicas' ids as text, each made once per projection transaction: a merge journals
    /// hundreds of thousands of conflicts between the same two or three replicas.
    struct OriginNames {
        private var names: [ReplicaID: DatabaseValue] = [:]

        mutating func name(of origin: ReplicaID) -> DatabaseValue {
            if let known = names[origin] { return known }
            let name = origin.description.databaseValue
            names[origin] = name
            return name
        }
    }
}
