import Foundation
import GRDB
import TallyCore

/// Which expenses to list.
public struct ExpenseFilter: Sendable {
    /// `YYYY-MM` in each expense's own offset.
    public var month: String?
    /// Instants (inclusive from, exclusive to).
    public var from: DateTime?
    public var to: DateTime?
    /// A category id; its sub-categories are included.
    public var categoryId: String?
    public var tag: String?
    /// Exactly this payee.
    public var payee: String?
    /// income | expense
    public var kind: String?
    /// Text the payee, memo or payment method contains (case-insensitive for ASCII letters).
    public var text: String?
    /// Most rows to return.
    public var limit: Int = 100
    /// Continue after this (date_ms, id), newest first: the cursor of the previous page's last row.
    public var after: (dateMillis: Int64, id: String)?

    public init() {}

    /// Whether SQLite answers the page by walking one index in date order (by month or by
    /// date) and stopping after `limit` rows: no condition that could pass over many rows
    /// before it finds a match (text, kind, payee, tag, category). Such a page costs about as
    /// much as reading one expense by id.
    public var walksOneIndexInOrder: Bool {
        text == nil && kind == nil && payee == nil && tag == nil && categoryId == nil
    }
}

/// Totals of one month, by currency (amounts never mix currencies).
public struct MonthSummary: Sendable, Equatable {
    public struct Total: Sendable, Equatable {
        public var currency: String
        public var income: AmountSum
        public var expense: AmountSum
        public var count: Int
        public var net: AmountSum { income.minus(expense) }
    }
    /// A group total: category (rolled up to its top-level category) or payment method.
    public struct Group: Sendable, Equatable {
        /// Category id or payment method; nil for "none".
        public var key: String?
        /// What to show: the category's name, or the payment method.
        public var label: String
        public var kind: String
        public var currency: String
        public var amount: AmountSum
        public var count: Int
    }

    public var month: String
    /// Card purchases counted in the month their bill is due (else in the month they were made).
    public var byBill = false
    public var totals: [Total]
    public var byCategory: [Group]
    public var byPayment: [Group]
    /// The month's largest payees of spending, per currency (at most `topPayeeCount` each).
    public var topPayees: [Group] = []
    /// The challenges that run during the month (start on or before its end, end on or after its start).
    public var challenges: [TodoRow] = []
    /// The budgets that apply to the month, with what was spent against each.
    public var budgets: [BudgetStatus] = []

    /// How many payees `topPayees` lists per currency.
    public static let topPayeeCount = 10
}

/// Read-only queries on the views. Every list is ordered deterministically.
public enum ProjectionQueries {
    private static let expenseColumns = ViewRecordJSON.Selection.expenses.sql

    /// Expenses matching `filter`, newest first.
    public static func expenses(_ db: Database, _ filter: ExpenseFilter) throws -> [ExpenseRow] {
        let (statement, arguments) = try expensesStatement(db, filter)
        return try Array(Row.fetchCursor(statement, arguments: arguments).map(ExpenseRow.init))
    }

    /// The same expenses as JSON, written straight from the rows (`ViewRecordJSON`).
    public static func expensesJSON(_ db: Database, _ filter: ExpenseFilter, isHeld: (String) -> Bool) throws -> ViewRecordJSON.Page {
        let (statement, arguments) = try expensesStatement(db, filter)
        return try ViewRecordJSON.write(statement, arguments, .expenses, isHeld: isHeld, db)
    }

    /// The SELECT of the expenses matching `filter`, newest first, and its arguments. Compiled
    /// once per connection for each shape of filter (a category filter's varies with its
    /// tree, so that one is compiled each time).
    static func expensesStatement(_ db: Database, _ filter: ExpenseFilter) throws -> (Statement, StatementArguments) {
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let month = filter.month {
            conditions.append("e.month = ?")
            arguments += [month]
        }
        if let from = filter.from {
            conditions.append("e.date_ms >= ?")
            arguments += [from.epochMillis]
        }
        if let to = filter.to {
            conditions.append("e.date_ms < ?")
            arguments += [to.epochMillis]
        }
        if let kind = filter.kind {
            conditions.append("e.kind = ?")
            arguments += [kind]
        }
        if let payee = filter.payee {
            conditions.append("e.payee = ?")
            arguments += [payee]
        }
        if let text = filter.text {
            // LIKE with its wildcards escaped: the text is matched literally.
            let pattern =
                "%"
                + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                .replacingOccurrences(of: "_", with: "\\_") + "%"
            conditions.append(#"(e.payee LIKE ? ESCAPE '\' OR e.memo LIKE ? ESCAPE '\' OR e.payment LIKE ? ESCAPE '\')"#)
            arguments += [pattern, pattern, pattern]
        }
        if let tag = filter.tag {
            conditions.append("e.id IN (SELECT expense_id FROM expense_tags WHERE tag = ?)")
            arguments += [tag]
        }
        if let category = filter.categoryId {
            let ids = try categoryWithDescendants(db, category)
            conditions.append("e.category_id IN (\(ids.map { _ in "?" }.joined(separator: ",")))")
            arguments += StatementArguments(ids)
        }
        if let after = filter.after {
            conditions.append("(e.date_ms < ? OR (e.date_ms = ? AND e.id < ?))")
            arguments += [after.dateMillis, after.dateMillis, after.id]
        }
        let sql = """
            SELECT \(expenseColumns) FROM expenses e
            LEFT JOIN categories c ON c.id = e.category_id LEFT JOIN categories p ON p.id = c.parent_id
            \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
            ORDER BY e.date_ms DESC, e.id DESC LIMIT ?
            """
        arguments += [filter.limit]
        return (filter.categoryId == nil ? try db.cachedStatement(sql: sql) : try db.makeStatement(sql: sql), arguments)
    }

    /// One expense by id, as a row or as its JSON.
    public static func expense(_ db: Database, id: String) throws -> ExpenseRow? {
        try Row.fetchOne(try expenseStatement(db), arguments: [id]).map(ExpenseRow.init)
    }

    public static func expenseJSON(_ db: Database, id: String, isHeld: (String) -> Bool) throws -> JSONText? {
        oneJSON(try ViewRecordJSON.write(try expenseStatement(db), [id], .expenses, isHeld: isHeld, db))
    }

    /// Cached: the statement is compiled once per connection, not per request.
    private static func expenseStatement(_ db: Database) throws -> Statement {
        try db.cachedStatement(
            sql: """
                SELECT \(expenseColumns) FROM expenses e
                LEFT JOIN categories c ON c.id = e.category_id LEFT JOIN categories p ON p.id = c.parent_id WHERE e.id = ?
                """)
    }

    /// The one item of a page, if there is one, as the text written (`JSONText.member` reads
    /// a field of it; parsing it here cost a fifth of a GET by id).
    static func oneJSON(_ page: ViewRecordJSON.Page) -> JSONText? {
        guard page.count == 1 else { return nil }
        return .raw(String(decoding: page.items.dropFirst().dropLast(), as: UTF8.self))
    }

    /// A category and every category below it.
    public static func categoryWithDescendants(_ db: Database, _ id: String) throws -> [String] {
        try String.fetchAll(
            db,
            sql: """
                WITH RECURSIVE tree(id) AS (SELECT ? UNION SELECT c.id FROM categories c JOIN tree ON c.parent_id = tree.id)
                SELECT id FROM tree ORDER BY id
                """, arguments: [id])
    }

    /// Categories as a tree: each parent followed by its children (depth-first, by name), with depth.
    public static func categoryTree(_ db: Database) throws -> [(category: CategoryRow, depth: Int)] {
        let all = try Row.fetchAll(db, sql: "SELECT \(categoryColumns) FROM categories ORDER BY name, id").map(category)
        let ids = Set(all.map(\.id))
        var children: [String?: [CategoryRow]] = [:]
        // A parent not (yet) known shows its child at the top level until it arrives.
        for category in all { children[category.parentId.flatMap { ids.contains($0) ? $0 : nil }, default: []].append(category) }
        var result: [(CategoryRow, Int)] = []
        var visited: Set<String> = []
        // Depth-first with a stack of its own, not by recursion: nothing bounds how deep a
        // chain of parents goes (a member's push, or a peer's events), and a thread's stack does.
        var open: [(rest: ArraySlice<CategoryRow>, depth: Int)] = [((children[nil] ?? [])[...], 0)]
        while let depth = open.last?.depth {
            guard let category = open[open.count - 1].rest.popFirst() else {
                open.removeLast()
                continue
            }
            guard visited.insert(category.id).inserted else { continue }
            result.append((category, depth))
            open.append(((children[category.id] ?? [])[...], depth + 1))
        }
        // Categories caught in a cycle (possible only through concurrent remote edits) still show.
        for category in all where !visited.contains(category.id) { result.append((category, 0)) }
        return result
    }

    /// The columns of a category row, and the one place they are read (by name).
    static let categoryColumns = "id, name, parent_id, icon, kind"

    private static func category(_ row: Row) -> CategoryRow {
        CategoryRow(id: row["id"], name: row["name"], parentId: row["parent_id"], icon: row["icon"], kind: row["kind"])
    }

    /// To-dos, not completed first, then by title; as rows or as their JSON.
    public static func todos(_ db: Database) throws -> [TodoRow] {
        try Row.fetchAll(db, sql: todosSQL).map(TodoRow.init)
    }

    public static func todosJSON(_ db: Database, isHeld: (String) -> Bool) throws -> JSONText {
        .raw(String(decoding: try ViewRecordJSON.write(try db.cachedStatement(sql: todosSQL), [], .todos, isHeld: isHeld, db).items, as: UTF8.self))
    }

    private static let todosSQL = "SELECT \(ViewRecordJSON.Selection.todos.sql) FROM todos t ORDER BY t.is_completed, t.title, t.id"

    /// Settings by scope then key.
    public static func settings(_ db: Database) throws -> [SettingRow] {
        try Row.fetchAll(db, sql: "SELECT key, scope, value FROM settings ORDER BY scope, key").map {
            SettingRow(key: $0["key"], scope: $0["scope"], value: $0["value"])
        }
    }

    /// A month's totals: income vs expense per currency, by category, by payment method.
    /// `byCategory` rolls spending up to the top-level categories, or — given `within`, a
    /// category's id — to that category's direct children (its own expenses under itself, and
    /// expenses outside it left out): the drill-down of the web app's chart.
    ///
    /// `byBill`: a purchase on a card with a closing day counts in the month its bill is due,
    /// not the month it was made (`monthParts`); the top payees and the budgets stay by purchase date.
    public static func summary(
        _ db: Database, month: String, within root: String? = nil, byBill: Bool = false, schedules: [String: CardSchedule] = [:]
    ) throws -> MonthSummary {
        let parents = Dictionary(
            uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT id, parent_id, name FROM categories").map {
                typealias C = ParentColumn
                return ($0[C.id.rawValue] as String, (parent: $0[C.parentID.rawValue] as String?, name: $0[C.name.rawValue] as String))
            })
        /// The bucket an expense's category counts toward: `.some(nil)` for "no category" at
        /// the top level, `nil` when the category is outside `root`.
        func bucket(_ id: String?) -> String?? {
            // An expense whose category was deleted counts as having none.
            guard var current = id, parents[current] != nil else { return root == nil ? .some(nil) : nil }
            var steps = 0
            while current != root, let parent = parents[current]?.parent, parents[parent] != nil, parent != root, steps < 64 {
                current = parent
                steps += 1
            }
            if root == nil || current == root || parents[current]?.parent == root { return .some(current) }
            return nil
        }
        var totals: [String: MonthSummary.Total] = [:]
        var byCategory: [String: MonthSummary.Group] = [:]
        var byPayment: [String: MonthSummary.Group] = [:]
        let parts = try monthParts(db, month: month, byBill: byBill, schedules: schedules)
        func addTo(
            _ groups: inout [String: MonthSummary.Group], _ key: String, _ start: @autoclosure () -> MonthSummary.Group,
            _ amount: AmountSum, _ count: Int
        ) {
            var group = groups[key] ?? start()
            group.amount.add(amount)
            group.count += count
            groups[key] = group
        }
        for part in parts {
            let (kind, currency, category, payment, amount, count) = (part.kind, part.currency, part.category, part.payment, part.amount, part.count)
            var total = totals[currency] ?? MonthSummary.Total(currency: currency, income: AmountSum(), expense: AmountSum(), count: 0)
            if kind == "income" { total.income.add(amount) } else { total.expense.add(amount) }
            total.count += count
            totals[currency] = total
            if case .some(let top) = bucket(category) {
                addTo(
                    &byCategory, "\(top ?? "")|\(kind)|\(currency)",
                    MonthSummary.Group(
                        key: top, label: top.flatMap { parents[$0]?.name } ?? "(none)", kind: kind, currency: currency, amount: AmountSum(), count: 0),
                    amount, count)
            }
            addTo(
                &byPayment, "\(payment ?? "")|\(kind)|\(currency)",
                MonthSummary.Group(key: payment, label: payment ?? "(none)", kind: kind, currency: currency, amount: AmountSum(), count: 0),
                amount, count)
        }
        // Largest first; a total too large to show sorts above every other.
        let order: (MonthSummary.Group, MonthSummary.Group) -> Bool = {
            ($0.currency, $0.kind, $1.amount.value ?? .max, $0.label) < ($1.currency, $1.kind, $0.amount.value ?? .max, $1.label)
        }
        let challenges = try todos(db).filter { todo in
            guard todo.isChallenge, let start = todo.startDate else { return false }
            return String(start.prefix(7)) <= month && (todo.endDate.map { String($0.prefix(7)) >= month } ?? true)
        }
        // A group nothing is left in (by bill: every purchase of it billed in another month).
        func shown(_ group: MonthSummary.Group) -> Bool { group.count != 0 || group.amount != AmountSum() }
        return MonthSummary(
            month: month, byBill: byBill,
            totals: totals.values.filter { $0.count != 0 || $0.income != AmountSum() || $0.expense != AmountSum() }.sorted { $0.currency < $1.currency },
            byCategory: byCategory.values.filter(shown).sorted(by: order), byPayment: byPayment.values.filter(shown).sorted(by: order),
            topPayees: try topPayees(db, month: month).sorted(by: order), challenges: challenges,
            budgets: try budgetStatuses(db, month: month))
    }

    /// A month's spending per payee, the largest `MonthSummary.topPayeeCount` of each currency.
    static func topPayees(_ db: Database, month: String) throws -> [MonthSummary.Group] {
        var byCurrency: [String: [MonthSummary.Group]] = [:]
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT currency, payee, \(splitSum("amount")), COUNT(*) FROM expenses
                WHERE month = ? AND kind = 'expense' AND payee IS NOT NULL GROUP BY currency, payee
                """, arguments: [month])
        while let row = try rows.next() {
            typealias C = PayeeColumn
            let (payee, currency): (String, String) = (row[C.payee.rawValue], row[C.currency.rawValue])
            byCurrency[currency, default: []].append(
                MonthSummary.Group(
                    key: payee, label: payee, kind: "expense", currency: currency,
                    amount: AmountSum(row, C.amount.rawValue), count: row[C.count.rawValue]))
        }
        return byCurrency.values.flatMap { groups in
            groups.sorted { ($1.amount.value ?? .max, $0.label) < ($0.amount.value ?? .max, $1.label) }.prefix(MonthSummary.topPayeeCount)
        }
    }

    /// Income and expense per month and currency, oldest month first.
    public static func monthlyTotals(_ db: Database) throws -> [(month: String, total: MonthSummary.Total)] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT month, currency, \(splitSum("CASE WHEN kind = 'income' THEN amount ELSE 0 END")),
                       \(splitSum("CASE WHEN kind = 'expense' THEN amount ELSE 0 END")), COUNT(*)
                FROM expenses GROUP BY month, currency ORDER BY month, currency
                """
        ).map {
            typealias C = MonthColumn
            return (
                $0[C.month.rawValue],
                MonthSummary.Total(
                    currency: $0[C.currency.rawValue], income: AmountSum($0, C.income.rawValue),
                    expense: AmountSum($0, C.expense.rawValue), count: $0[C.count.rawValue])
            )
        }
    }

    /// Two columns whose sums make `SUM(expression)` as `high × 10^9 + low` (`AmountSum`):
    /// SQLite's SUM fails the whole query on an integer overflow, and a total of user data
    /// must be reported as too large, not break the summary. Neither part can overflow before
    /// about 10^9 rows. `AmountSum(row, column)` reads them.
    static func splitSum(_ expression: String) -> String {
        "SUM((\(expression)) / 1000000000), SUM((\(expression)) % 1000000000)"
    }

    /// A stored JSON array of strings, read by Tally's own parser: `JSONSerialization` dropped a
    /// leading U+FEFF from a string (a tag "\u{FEFF}x" read back as "x").
    static func jsonStrings(_ text: String) -> [String] {
        if text == "[]" { return [] }  // most rows: no tags, no attachments
        guard case .array(let items)? = try? StrictJSON.parse(Array(text.utf8)) else { return [] }
        return items.compactMap { if case .string(let item) = $0 { item } else { nil } }
    }

    static func jsonBools(_ text: String) -> [Bool] {
        guard case .array(let items)? = try? StrictJSON.parse(Array(text.utf8)) else { return [] }
        return items.compactMap { if case .bool(let item) = $0 { item } else { nil } }
    }
}

/// One journaled conflict (values as JSON).
public struct ConflictRow: Sendable, Equatable {
    public var entityID: String
    public var entityType: String
    public var property: String
    public var losingValue: String
    public var loserHLC: String
    public var loserOrigin: String
    public var winningValue: String
    public var winnerHLC: String
    public var winnerOrigin: String
}

/// Why a category is shown as another.
public struct CategoryMergeRow: Sendable, Equatable {
    public var loserID: String
    public var winnerID: String
    public var reason: String
}

extension ProjectionQueries {
    /// The conflict journal, optionally for one entity.
    public static func conflicts(_ db: Database, entityID: String?) throws -> [ConflictRow] {
        let sql =
            "SELECT entity_id, entity_type, property, losing_value, loser_hlc, loser_origin, winning_value, winner_hlc, winner_origin FROM conflicts"
            + (entityID == nil ? "" : " WHERE entity_id = ?") + " ORDER BY entity_id, property, loser_hlc, loser_origin"
        return try Row.fetchAll(db, sql: sql, arguments: entityID.map { [$0.lowercased()] } ?? []).map {
            ConflictRow(
                entityID: $0["entity_id"], entityType: $0["entity_type"], property: $0["property"], losingValue: $0["losing_value"],
                loserHLC: $0["loser_hlc"], loserOrigin: $0["loser_origin"], winningValue: $0["winning_value"], winnerHLC: $0["winner_hlc"],
                winnerOrigin: $0["winner_origin"])
        }
    }

    /// The merge a category is part of as the loser, if any.
    public static func categoryMerge(_ db: Database, loserID: String) throws -> CategoryMergeRow? {
        try Row.fetchOne(db, sql: "SELECT loser_id, winner_id, reason FROM category_merges WHERE loser_id = ?", arguments: [loserID.lowercased()])
            .map(categoryMerge)
    }

    /// Every category merge.
    public static func categoryMerges(_ db: Database) throws -> [CategoryMergeRow] {
        try Row.fetchAll(db, sql: "SELECT loser_id, winner_id, reason FROM category_merges ORDER BY loser_id").map(categoryMerge)
    }

    /// The one place a merge's row is read (by column name).
    private static func categoryMerge(_ row: Row) -> CategoryMergeRow {
        CategoryMergeRow(loserID: row["loser_id"], winnerID: row["winner_id"], reason: row["reason"])
    }
}

extension ProjectionQueries {
    /// One category by id; a merged-away duplicate answers with the category that stands for it.
    public static func category(_ db: Database, id: String) throws -> CategoryRow? {
        let winner = try String.fetchOne(db.cachedStatement(sql: "SELECT winner_id FROM category_merges WHERE loser_id = ?"), arguments: [id]) ?? id
        return try Row.fetchOne(db.cachedStatement(sql: "SELECT \(categoryColumns) FROM categories WHERE id = ?"), arguments: [winner]).map(category)
    }

    /// One to-do by id, as a row or as its JSON.
    public static func todo(_ db: Database, id: String) throws -> TodoRow? {
        try Row.fetchOne(db.cachedStatement(sql: todoSQL), arguments: [id]).map(TodoRow.init)
    }

    public static func todoJSON(_ db: Database, id: String, isHeld: (String) -> Bool) throws -> JSONText? {
        oneJSON(try ViewRecordJSON.write(try db.cachedStatement(sql: todoSQL), [id], .todos, isHeld: isHeld, db))
    }

    private static let todoSQL = "SELECT \(ViewRecordJSON.Selection.todos.sql) FROM todos t WHERE t.id = ?"

    /// One setting by key (replicated first, then local).
    public static func setting(_ db: Database, key: String) throws -> SettingRow? {
        try settings(db).first { $0.key == key }
    }
}

extension ProjectionQueries {
    /// How many conflicts are journaled and categories merged: a sync reports the growth.
    /// Every attachment digest a live expense or to-do references.
    public static func referencedAttachments(_ db: Database) throws -> Set<String> {
        Set(
            try String.fetchAll(
                db,
                sql: """
                    SELECT j.value FROM expenses, json_each(expenses.attachments) AS j WHERE expenses.attachments != '[]'
                    UNION SELECT j.value FROM todos, json_each(todos.attachments) AS j WHERE todos.attachments != '[]'
                    """))
    }

    public static func mergeCounts(_ db: Database) throws -> (conflicts: Int, merges: Int) {
        (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM conflicts") ?? 0, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM category_merges") ?? 0)
    }
}

extension AmountSum {
    /// The sum `ProjectionQueries.splitSum` selected at `column` of `row` and the column after
    /// it (zero for a SUM of no rows).
    init(_ row: Row, _ column: Int) {
        self.init(high: (row[column] as Int64?) ?? 0, low: (row[column + 1] as Int64?) ?? 0)
    }
}

// The columns of the queries that read many rows, each named once in its SELECT's order and
// read by position: a lookup by name searches the row's columns every time, and reading
// the month summary's rows by name made it ~30 % slower (`asof_summary_p50`, issue 30).
// A summed amount is two columns (`splitSum`): the case names the first.

/// `summary`'s rows grouped by kind, currency, category and payment (the month by bill's,
/// by their day too).
enum GroupColumn: Int { case kind, currency, categoryID, payment, amount, amountLow, count, day }
/// The 12-month report's split lines, summed by month, category, kind and currency.
enum LineShiftColumn: Int { case month, categoryID, kind, currency, amount, amountLow }
/// `topPayees`' rows.
enum PayeeColumn: Int { case currency, payee, amount, amountLow, count }
/// `monthlyTotals`' rows.
enum MonthColumn: Int { case month, currency, income, incomeLow, expense, expenseLow, count }
/// The category parents `summary` walks.
enum ParentColumn: Int { case id, parentID, name }
/// What a budget's month spent (`budgetStatuses`).
enum SpentColumn: Int { case spent, spentLow }
/// An `entity_state` row as `liveEntities` and `CategoryViews` select it.
enum EntityStateColumn: Int { case id, state }
