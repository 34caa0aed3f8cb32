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
        /// `expenses` row, in `expenses.columns` order.
        var expense: [DatabaseValue]?
        /// `expense_tags` rows of that expense.
        var tags: [String] = []
        /// `todos` row, in `todos.columns` order.
        var todo: [DatabaseValue]?
        /// `settings` row: scope, key, value.
        var setting: [DatabaseValue]?
        /// `budgets` row, in `budgets.columns` order.
        var budget: [DatabaseValue]?

        /// An entity that shows nothing (never seen, deleted, or missing a required property).
        static let none = Rows()
    }

    /// A view table keyed by its first column, and its INSERT (built once: it is the statement cache's key).
    struct Table {
        let name: String
        let columns: [String]
        let insertSQL: String

        init(_ name: String, _ columns: [String]) {
            (self.name, self.columns) = (name, columns)
            insertSQL = "INSERT INTO \(name) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
        }
    }

    static let expenses = Table(
        "expenses",
        [
            "id", "kind", "amount", "currency", "date", "date_ms", "month", "category_ref", "category_id",
            "payment", "memo", "tags", "repeat", "attachments", "payee",
        ])
    static let budgets = Table("budgets", ["id", "category_ref", "category_id", "amount", "currency", "from_month", "to_month"])
    static let todos = Table(
        "todos",
        [
            "id", "title", "memo", "start_date", "end_date", "checks", "checks_done", "percentage", "is_challenge",
            "is_completed", "attachments",
        ])

    /// Who stands for each merged category (`category_merges`: loser → winner).
    static func categoryWinners(_ db: Database) throws -> [String: String] {
        Dictionary(
            uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT loser_id, winner_id FROM category_merges").map {
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
            guard let row = ExpenseRow(entity) else { return .none }
            let shownCategory = row.categoryId.map { winners[$0] ?? $0 }
            rows.expense = [
                row.id.databaseValue, row.kind.databaseValue, row.amount.databaseValue, row.currency.databaseValue,
                row.date.databaseValue, row.dateMillis.databaseValue, row.month.databaseValue, row.categoryId.databaseValue,
                shownCategory.databaseValue, row.payment.databaseValue, row.memo.databaseValue,
                JSONText.array(row.tags.map(JSONText.string)).serialized.databaseValue, row.repeat.databaseValue,
                JSONText.array(row.attachments.map(JSONText.string)).serialized.databaseValue, row.payee.databaseValue,
            ]
            rows.tags = row.tags
        case .category, .recurring, .importBatch, .rule, .rate:
            // Categories: `CategoryViews`. Recurring rules have no table: they are read from
            // `entity_state`, and their occurrences are ordinary expenses.
            break
        case .todo:
            guard let row = TodoRow(entity) else { return .none }
            rows.todo = [
                row.id.databaseValue, row.title.databaseValue, row.memo.databaseValue, row.startDate.databaseValue,
                row.endDate.databaseValue, JSONText.array(row.checks.map(JSONText.bool)).serialized.databaseValue,
                row.checks.filter { $0 }.count.databaseValue, row.percentage.databaseValue, row.isChallenge.databaseValue,
                row.isCompleted.databaseValue, JSONText.array(row.attachments.map(JSONText.string)).serialized.databaseValue,
            ]
        case .budget:
            guard let row = BudgetRow(entity) else { return .none }
            let shownCategory = row.categoryRef.map { winners[$0] ?? $0 }
            rows.budget = [
                row.id.databaseValue, row.categoryRef.databaseValue, shownCategory.databaseValue, row.amount.databaseValue,
                row.currency.databaseValue, row.fromMonth.databaseValue, row.toMonth.databaseValue,
            ]
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
        try writeRow(expenses, old: old.expense, new: new.expense, db)
        if old.tags != new.tags, let id = (new.expense ?? old.expense)?[0] {
            // Rows to delete exist only if the old rows had tags (a first load never does).
            if !old.tags.isEmpty { try db.cachedStatement(sql: "DELETE FROM expense_tags WHERE expense_id = ?").execute(arguments: [id]) }
            let insert = try db.cachedStatement(sql: "INSERT INTO expense_tags (expense_id, tag) VALUES (?, ?)")
            for tag in new.tags { try DirectStatement.execute(insert, [id, tag.databaseValue], db) }
        }
        try writeRow(todos, old: old.todo, new: new.todo, db)
        try writeRow(budgets, old: old.budget, new: new.budget, db)
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
    static func writeRow(_ table: Table, old: [DatabaseValue]?, new: [DatabaseValue]?, _ db: Database) throws {
        let columns = table.columns
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

    /// Adds conflicts to the journal (which only ever grows; a conflict found again is kept once).
    static func insertConflicts(_ conflicts: [LedgerState.Conflict], of entity: LedgerState.Entity, origins: inout OriginNames, _ db: Database) throws {
        let id = entity.id.description.databaseValue, type = entity.type.description.databaseValue
        let insert = try db.cachedStatement(
            sql: """
                INSERT OR IGNORE INTO conflicts (entity_id, entity_type, property, loser_hlc, loser_origin, losing_value, winner_hlc, winner_origin, winning_value)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        for conflict in conflicts {
            // Bound through the C API (`DirectStatement`): a merge of two busy replicas journals
            // hundreds of thousands, and GRDB's argument copies were most of their cost.
            try DirectStatement.execute(
                insert,
                [
                    id, type, conflict.property.jsonName.databaseValue, conflict.loser.timestamp.description.databaseValue,
                    origins.name(of: conflict.loser.origin), conflict.losingValue.json.serialized.databaseValue,
                    conflict.winner.timestamp.description.databaseValue, origins.name(of: conflict.winner.origin),
                    conflict.winningValue.json.serialized.databaseValue,
                ], db)
        }
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
