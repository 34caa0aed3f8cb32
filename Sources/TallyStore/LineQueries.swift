import Foundation
import GRDB
import TallyCore

/// Split receipts (issue 34, docs/HOUSEHOLD.md "Split receipts"): an expense whose amount is
/// shared out among lines of their own categories.
///
/// The expenses' own totals stay as they are (a line moves no money between months, kinds,
/// currencies or payment methods); what lines change is which category an amount counts
/// under. `lineShiftsSQL` says so as rows beside the expenses': for each line, its amount
/// added to its category and taken from its expense's. Category totals (the month summary,
/// budgets, reports) add these rows to the expenses' own. A line whose expense these views do
/// not hold is in no total (`unattached`).
extension ProjectionQueries {
    /// Rows `(month, kind, currency, category_id, payment, amount, expense_id, account_id, date,
    /// date_ms)` — the expense's — that
    /// move each attached line's amount from its expense's category to its own (a line with no
    /// category keeps its expense's, and moves nothing).
    ///
    /// `CROSS JOIN` keeps the lines the outer loop (SQLite never reorders it): there are few of
    /// them, and each finds its expense by primary key. Left to itself, the planner walked a
    /// million expenses probing for lines (145 ms for a month's summary where 3 ms was enough).
    static let lineShiftsSQL = """
        SELECT e.month AS month, e.kind AS kind, e.currency AS currency, COALESCE(l.category_id, e.category_id) AS category_id,
               e.payment AS payment, l.amount AS amount, e.id AS expense_id, e.account_id AS account_id, e.date AS date, e.date_ms AS date_ms
        FROM expense_lines l CROSS JOIN expenses e ON e.id = l.expense_id
        UNION ALL
        SELECT e.month, e.kind, e.currency, e.category_id, e.payment, -l.amount, e.id, e.account_id, e.date, e.date_ms
        FROM expense_lines l CROSS JOIN expenses e ON e.id = l.expense_id
        """

    /// Split receipts as JSON: `{receipts: [...], unattached: [lines]}`, the receipts that need
    /// attention first, then newest first. With `expenseID`, only that expense's (as a
    /// receipt, lines or none), or nil when the views hold no such expense.
    public static func splitReceiptsJSON(_ db: Database, expenseID: String? = nil) throws -> JSONText? {
        let columns = "SELECT id, kind, amount, currency, date, payee, category_id FROM expenses"
        let expenses =
            if let expenseID {
                try Row.fetchAll(db, sql: "\(columns) WHERE id = ?", arguments: [expenseID])
            } else {
                try Row.fetchAll(db, sql: "\(columns) WHERE id IN (SELECT expense_id FROM expense_lines) ORDER BY date_ms DESC, id")
            }
        if expenseID != nil, expenses.isEmpty { return nil }
        var receipts: [(needsAttention: Bool, json: JSONText)] = []
        for expense in expenses { receipts.append(try receiptJSON(expense, db)) }
        if expenseID != nil { return receipts.first?.json }
        let unattached = try db.cachedStatement(
            sql: """
                SELECT \(ViewRecordJSON.Selection.lines.sql) FROM expense_lines l
                WHERE NOT EXISTS (SELECT 1 FROM expenses e WHERE e.id = l.expense_id) ORDER BY l.expense_id, l.id
                """)
        let ordered = receipts.filter(\.needsAttention) + receipts.filter { !$0.needsAttention }
        let unattachedItems = try ViewRecordJSON.write(unattached, [], .lines, isHeld: { _ in true }, db).items
        return .object([("receipts", .array(ordered.map(\.json))), ("unattached", .raw(String(decoding: unattachedItems, as: UTF8.self)))])
    }

    /// One expense as a receipt: what it paid, what its lines assign, whether they add up.
    private static func receiptJSON(_ expense: Row, _ db: Database) throws -> (needsAttention: Bool, json: JSONText) {
        let id: String = expense["id"]
        let amount: Int64 = expense["amount"]
        let sums = try db.cachedStatement(sql: "SELECT \(splitSum("amount")), count(*) FROM expense_lines WHERE expense_id = ?")
        let sum = try Row.fetchOne(sums, arguments: [id])
        let assigned: AmountSum = sum.map { AmountSum(high: $0[0] ?? 0, low: $0[1] ?? 0) } ?? AmountSum()
        let count: Int = sum?[2] ?? 0
        let needsAttention = count > 0 && assigned.value != amount
        let lines = try db.cachedStatement(
            sql: "SELECT \(ViewRecordJSON.Selection.lines.sql) FROM expense_lines l WHERE l.expense_id = ? ORDER BY l.amount DESC, l.id")
        let items: [UInt8] = try ViewRecordJSON.write(lines, [id], .lines, isHeld: { _ in true }, db).items
        func text(_ column: String) -> JSONText {
            guard let value: String = expense[column] else { return .null }
            return .string(value)
        }
        var unassigned: JSONText = .null
        var assignedJSON: JSONText = .null
        if let value = assigned.value {
            assignedJSON = .int(value)
            let (difference, overflow) = amount.subtractingReportingOverflow(value)
            if !overflow { unassigned = .int(difference) }
        }
        var fields: [(String, JSONText)] = [("expenseId", .string(id)), ("kind", text("kind")), ("amount", .int(amount))]
        fields += [("currency", text("currency")), ("date", text("date")), ("payee", text("payee")), ("categoryId", text("category_id"))]
        fields += [("assigned", assignedJSON), ("unassigned", unassigned), ("needsAttention", .bool(needsAttention))]
        fields.append(("lines", .raw(String(decoding: items, as: UTF8.self))))
        return (needsAttention, .object(fields))
    }

    /// One line as JSON.
    public static func lineJSON(_ db: Database, id: String) throws -> JSONText? {
        let statement = try db.cachedStatement(sql: "SELECT \(ViewRecordJSON.Selection.lines.sql) FROM expense_lines l WHERE l.id = ?")
        return oneJSON(try ViewRecordJSON.write(statement, [id], .lines, isHeld: { _ in true }, db))
    }

    /// An expense's lines: id → the category the views show for it (merged duplicates
    /// resolved), for a write that replaces them.
    public static func lineCategories(_ db: Database, expenseID: String) throws -> [String: String?] {
        var categories: [String: String?] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, category_id FROM expense_lines WHERE expense_id = ?", arguments: [expenseID]) {
            categories[row["id"]] = .some(row["category_id"])
        }
        return categories
    }
}
