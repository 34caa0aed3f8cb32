import Foundation
import GRDB
import TallyCore

/// Rewrites the category views from all categories' states: `categories` (winners only, with
/// canonical parents), `category_merges` (who stands for whom, and why), and re-points the
/// expenses whose category's winner changed.
enum CategoryViews {
    static func refresh(_ db: Database) throws {
        var live: [LedgerState.Entity] = []
        let rows = try Row.fetchCursor(db, sql: "SELECT id, state FROM entity_state WHERE type = ?", arguments: [Int(EntityType.category.rawValue)])
        while let row = try rows.next() {
            let entity = try ProjectionQueries.entityState(row)
            if entity.isLive, CategoryRow(entity) != nil { live.append(entity) }
        }
        let categories = live.compactMap(CategoryRow.init)
        let (canonical, merges) = CategoryDeduplication.resolve(
            categories.map {
                CategoryDeduplication.Category(id: $0.id, name: $0.name, parentId: $0.parentId)
            })
        let oldWinners = try ViewRows.categoryWinners(db)

        try db.execute(sql: "DELETE FROM categories")
        let insert = try db.cachedStatement(sql: "INSERT INTO categories (id, name, parent_id, icon, kind) VALUES (?, ?, ?, ?, ?)")
        for row in categories.sorted(by: { $0.id < $1.id }) where canonical[row.id] == row.id {
            let parent = row.parentId.map { canonical[$0] ?? $0 }
            try insert.execute(arguments: [row.id, row.name, parent, row.icon, row.kind])
        }
        try db.execute(sql: "DELETE FROM category_merges")
        let insertMerge = try db.cachedStatement(sql: "INSERT INTO category_merges (loser_id, winner_id, reason) VALUES (?, ?, ?)")
        for merge in merges { try insertMerge.execute(arguments: [merge.loser, merge.winner, merge.reason]) }

        let newWinners = Dictionary(uniqueKeysWithValues: merges.map { ($0.loser, $0.winner) })
        // An expense written against category X shows under X's winner (X itself if none):
        // moving from the old winner to the new one finds the rows by the old winner's index.
        // Budgets and split receipts' lines follow their category the same way.
        let repoint = try db.cachedStatement(sql: "UPDATE expenses SET category_id = ? WHERE category_id = ? AND category_ref = ?")
        let repointBudgets = try db.cachedStatement(sql: "UPDATE budgets SET category_id = ? WHERE category_id = ? AND category_ref = ?")
        let repointLines = try db.cachedStatement(sql: "UPDATE expense_lines SET category_id = ? WHERE category_id = ? AND category_ref = ?")
        for id in Set(oldWinners.keys).union(newWinners.keys).sorted() where oldWinners[id] != newWinners[id] {
            for statement in [repoint, repointBudgets, repointLines] {
                try statement.execute(arguments: [newWinners[id] ?? id, oldWinners[id] ?? id, id])
            }
        }
    }
}
