import Foundation

/// What a statement column holds.
public enum ColumnRole: String, CaseIterable, Sendable {
    /// When: a date, maybe with a time.
    case date
    /// Where or to whom: the merchant, the other party, the bank's description.
    case payee
    /// One signed column: positive is spending on a card statement (negative: a cancellation).
    case amount
    /// Money out of a bank account (spending).
    case debit
    /// Money into a bank account (income).
    case credit
    case memo
    /// ISO 4217 code per row (else `--currency`).
    case currency
    /// The bank's own id of the transaction (an approval or transaction number): the import key.
    case reference
    /// `income` or `expense` (then the amount is positive): a Tally export's rows.
    case kind
    /// A category path, `Food > Lunch` (categories missing are created).
    case category
    case payment
    /// Tags separated by `;`.
    case tags
}

/// Which column holds what, by header text: a built-in layout of a Korean card company or
/// bank, or one given on the command line. Header cells are compared with spaces removed and
/// letters lowercased, so `이용 일자` and `이용일자`, `Amount` and `amount` match.
public struct StatementLayout: Sendable {
    public var name: String
    /// Header names for each role (any one of them).
    public var headers: [ColumnRole: [String]]
    /// Columns by position (0-based), which win over names.
    public var positions: [ColumnRole: Int] = [:]
    /// Roles whose columns must be there for the header to be this layout's (beyond a date and an amount).
    public var required: Set<ColumnRole> = []

    public init(name: String, headers: [ColumnRole: [String]], positions: [ColumnRole: Int] = [:], required: Set<ColumnRole> = []) {
        self.name = name
        self.headers = headers
        self.positions = positions
        self.required = required
    }

    /// The built-in layouts (docs/IMPORT.md lists their headers). `generic` knows every name
    /// the others use, plus English ones.
    public static let builtIn: [StatementLayout] = [
        StatementLayout(
            name: "tally-export",
            headers: [
                .date: ["date"], .kind: ["kind"], .amount: ["amount"], .currency: ["currency"], .category: ["category"],
                .payee: ["payee"], .payment: ["payment"], .memo: ["memo"], .tags: ["tags"], .reference: ["id"],
            ],
            required: [.kind, .currency, .reference]),
        StatementLayout(name: "samsung-card", headers: [.date: ["이용일"], .payee: ["가맹점", "가맹점명"], .amount: ["이용금액"], .reference: ["승인번호"]]),
        StatementLayout(name: "shinhan-card", headers: [.date: ["이용일자"], .payee: ["이용가맹점"], .amount: ["이용금액"], .reference: ["승인번호"]]),
        StatementLayout(name: "kb-card", headers: [.date: ["이용일"], .payee: ["이용하신곳"], .amount: ["국내이용금액(원)"], .reference: ["승인번호"]]),
        StatementLayout(name: "hyundai-card", headers: [.date: ["이용일"], .payee: ["이용가맹점"], .amount: ["이용금액"], .reference: ["승인번호"]]),
        StatementLayout(
            name: "kb-bank",
            headers: [.date: ["거래일시"], .payee: ["적요", "보낸분/받는분"], .debit: ["출금액", "찾으신금액"], .credit: ["입금액", "맡기신금액"], .memo: ["메모", "내용"]]),
        StatementLayout(
            name: "shinhan-bank", headers: [.date: ["거래일자"], .payee: ["내용", "적요"], .debit: ["출금(원)", "출금"], .credit: ["입금(원)", "입금"], .memo: ["메모"]]),
        StatementLayout(
            name: "generic",
            headers: [
                .date: ["이용일", "이용일자", "거래일자", "거래일", "거래일시", "승인일자", "승인일시", "사용일", "사용일자", "date", "transactiondate", "posteddate", "day"],
                .payee: ["가맹점", "가맹점명", "이용하신곳", "이용가맹점", "적요", "거래내용", "기재내용", "내용", "보낸분/받는분", "payee", "description", "merchant", "name"],
                .amount: ["이용금액", "국내이용금액(원)", "승인금액", "금액", "거래금액", "amount"],
                .debit: ["출금액", "출금", "출금(원)", "찾으신금액", "지급금액", "debit", "withdrawal", "withdrawals", "out"],
                .credit: ["입금액", "입금", "입금(원)", "맡기신금액", "credit", "deposit", "deposits", "in"],
                .memo: ["메모", "비고", "memo", "note", "notes"],
                .currency: ["통화", "currency"],
                .reference: ["승인번호", "거래번호", "reference", "transactionid", "id", "fitid"],
            ]),
    ]

    /// A built-in layout by name.
    public static func named(_ name: String) -> StatementLayout? { builtIn.first { $0.name == name } }

    static func normalize(_ header: String) -> String {
        String(header.unicodeScalars.filter { !$0.properties.isWhitespace }.map(Character.init)).lowercased()
    }

    /// Whether the roles found are enough to read transactions: a date, and an amount or a
    /// debit or credit column.
    static func isReadable(_ columns: [ColumnRole: Int]) -> Bool {
        columns[.date] != nil && (columns[.amount] != nil || columns[.debit] != nil || columns[.credit] != nil)
    }

    /// Where each role's column is in a header row, by name (positions given apply on top).
    func columns(in header: [String]) -> [ColumnRole: Int] {
        let cells = header.map(Self.normalize)
        var found: [ColumnRole: Int] = [:]
        for (role, names) in headers {
            let wanted = Set(names.map(Self.normalize))
            if let index = cells.firstIndex(where: { wanted.contains($0) }) { found[role] = index }
        }
        return found
    }

    /// Finds the header row of a sheet: the first of its first 50 rows whose names some
    /// layout of `layouts` reads (a date and an amount, debit or credit column); a built-in
    /// company's layout wins over `generic` (the most roles read, then the first listed).
    static func findHeader(in sheet: StatementSheet, layouts: [StatementLayout]) -> (position: Int, layout: StatementLayout, columns: [ColumnRole: Int])? {
        for (position, row) in sheet.rows.prefix(50).enumerated() {
            if let (layout, columns) = best(for: row.cells, among: layouts) { return (position, layout, columns) }
        }
        return nil
    }

    /// The layout of `layouts` that reads a header row, and its columns: a company's over
    /// `generic`, the most roles read, then the first listed. Nil if none reads it.
    static func best(for header: [String], among layouts: [StatementLayout]) -> (StatementLayout, [ColumnRole: Int])? {
        let readings = layouts.map { ($0, $0.columns(in: header)) }.filter { isReadable($0.1) && $0.0.required.isSubset(of: Set($0.1.keys)) }
        let specific = readings.filter { $0.0.name != "generic" }
        let choices = specific.isEmpty ? readings : specific
        return choices.enumerated().max(by: { ($0.element.1.count, -$0.offset) < ($1.element.1.count, -$1.offset) })?.element
    }
}
