/// The columns every read of expenses selects, in order: the one statement of the expense
/// row's shape. `ProjectionQueries` selects `ExpenseColumn.selection`, and both readers of its
/// rows — `ExpenseRow`'s and `ExpensePageJSON`'s, straight from SQLite — name a column by its
/// case, never by a number.
enum ExpenseColumn: Int32, CaseIterable {
    case id, kind, amount, currency, date, dateMillis, month, categoryId, categoryName, parentCategoryName
    case payment, memo, tags, `repeat`, attachments, payee

    /// Its SQL, in the expenses query (`e` the expense, `c` its category, `p` the category's parent).
    var sql: String {
        switch self {
        case .id: "e.id"
        case .kind: "e.kind"
        case .amount: "e.amount"
        case .currency: "e.currency"
        case .date: "e.date"
        case .dateMillis: "e.date_ms"
        case .month: "e.month"
        case .categoryId: "e.category_id"
        case .categoryName: "c.name"
        case .parentCategoryName: "p.name"
        case .payment: "e.payment"
        case .memo: "e.memo"
        case .tags: "e.tags"
        case .repeat: "e.repeat"
        case .attachments: "e.attachments"
        case .payee: "e.payee"
        }
    }

    /// The SELECT list, in the cases' order.
    static let selection = allCases.map(\.sql).joined(separator: ", ")

    /// Its index in a row of `selection` (GRDB's `Row` subscript).
    var index: Int { Int(rawValue) }
}
