import Foundation
import GRDB
import TallyCore

/// One budget as it applies to a month: what was budgeted, what was spent (the category's
/// expenses and its sub-categories', in the budget's currency), what remains, and whether it
/// is over.
public struct BudgetStatus: Sendable, Equatable {
    public var budget: BudgetRow
    /// The category's name (nil: a budget of all spending).
    public var categoryName: String?
    public var spent: AmountSum
    public var remaining: AmountSum { AmountSum(budget.amount).minus(spent) }
    public var isOver: Bool { spent.overflowed || (spent.value ?? 0) > budget.amount }
}

extension ProjectionQueries {
    /// Every live budget, by first month, category and id; as rows or as their JSON.
    public static func budgets(_ db: Database) throws -> [BudgetRow] {
        try Row.fetchAll(db, sql: budgetsSQL).map(BudgetRow.init)
    }

    public static func budgetsJSON(_ db: Database) throws -> JSONText {
        .raw(String(decoding: try ViewRecordJSON.write(try db.cachedStatement(sql: budgetsSQL), [], .budgets, isHeld: { _ in true }, db).items, as: UTF8.self))
    }

    /// One budget by id, as its JSON.
    public static func budgetJSON(_ db: Database, id: String) throws -> JSONText? {
        let statement = try db.cachedStatement(sql: "SELECT \(ViewRecordJSON.Selection.budgets.sql) FROM budgets b WHERE b.id = ?")
        return oneJSON(try ViewRecordJSON.write(statement, [id], .budgets, isHeld: { _ in true }, db))
    }

    private static let budgetsSQL = "SELECT \(ViewRecordJSON.Selection.budgets.sql) FROM budgets b ORDER BY b.from_month, b.category_id, b.currency, b.id"

    /// The budgets that apply to `month`: per category (as shown, merges followed) and currency,
    /// the one with the latest `fromMonth` among those whose range holds the month; on a tie, a
    /// budget with a `toMonth` (set for that stretch) over an open-ended one, then the budget
    /// written for the category itself over one that came with a merged duplicate, then the
    /// greatest id. Every replica with the same events picks the same one.
    public static func budgetStatuses(_ db: Database, month: String) throws -> [BudgetStatus] {
        let candidates = try Row.fetchAll(
            db,
            sql: """
                SELECT \(ViewRecordJSON.Selection.budgets.sql) FROM budgets b WHERE b.from_month <= ? AND (b.to_month IS NULL OR b.to_month >= ?)
                """, arguments: [month, month]
        ).map(BudgetRow.init)
        var chosen: [String: BudgetRow] = [:]
        func rank(_ b: BudgetRow) -> (String, Int, Int, String) { (b.fromMonth, b.toMonth != nil ? 1 : 0, b.categoryRef == b.categoryId ? 1 : 0, b.id) }
        for candidate in candidates {
            let key = "\(candidate.categoryId ?? "")|\(candidate.currency)"
            if let current = chosen[key], rank(current) >= rank(candidate) { continue }
            chosen[key] = candidate
        }
        return try chosen.values.sorted { ($0.categoryId ?? "", $0.currency) < ($1.categoryId ?? "", $1.currency) }.map { budget in
            var conditions = "month = ? AND kind = 'expense' AND currency = ?"
            var arguments: StatementArguments = [month, budget.currency]
            var name: String?
            if let category = budget.categoryId {
                let ids = try categoryWithDescendants(db, category)
                conditions += " AND category_id IN (\(ids.map { _ in "?" }.joined(separator: ",")))"
                arguments += StatementArguments(ids)
                name = try String.fetchOne(db, sql: "SELECT name FROM categories WHERE id = ?", arguments: [category])
            }
            // The expenses' own spending, then split receipts' lines moving amounts into or out of it.
            var spent = AmountSum()
            for source in ["expenses", "(\(lineShiftsSQL))"] {
                let row = try Row.fetchOne(db, sql: "SELECT \(splitSum("amount")) FROM \(source) WHERE \(conditions)", arguments: arguments)
                spent.add(row.map { AmountSum($0, SpentColumn.spent.rawValue) } ?? AmountSum())
            }
            return BudgetStatus(budget: budget, categoryName: name, spent: spent)
        }
    }

}

extension ProjectionQueries {
    /// Every live entity of `type`, from `entity_state` (types without a view table of their
    /// own, such as recurring rules), by id.
    public static func liveEntities(_ db: Database, type: EntityType) throws -> [LedgerState.Entity] {
        var entities: [LedgerState.Entity] = []
        let rows = try Row.fetchCursor(db, sql: "SELECT id, state FROM entity_state WHERE type = ? ORDER BY id", arguments: [Int(type.rawValue)])
        while let row = try rows.next() {
            let entity = try entityState(row)
            if entity.isLive { entities.append(entity) }
        }
        return entities
    }

    /// An `entity_state` row (`id`, `state`) decoded: the one place one is read.
    static func entityState(_ row: Row) throws -> LedgerState.Entity {
        try EntityStateCodec.decode(Array(row[EntityStateColumn.state.rawValue] as Data), id: EntityID(parsing: row[EntityStateColumn.id.rawValue]))
    }
}
