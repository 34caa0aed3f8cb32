import Foundation

// What a statement file holds once read, in the ledger's terms: the rows the file formats of
// `TallyImport` produce and `Ledger.importStatement` takes (issue 30: the ledger takes rows and
// knows no file format).

/// A transaction read from a statement.
public struct StatementRow: Sendable, Equatable {
    /// Where it is: the sheet (a CSV file has one, named "") and the row number the file counts.
    public var sheet: String
    public var row: Int
    public var date: DateTime
    /// Minor units, always positive; `kind` says which way it went.
    public var amount: Int64
    /// "expense" or "income".
    public var kind: String
    /// A card statement's negative amount: a cancellation, refunded (kind income).
    public var isRefund: Bool
    public var currency: String
    public var payee: String?
    public var memo: String?
    /// The statement's own id of the transaction, if it has one.
    public var reference: String?
    /// A category path (top first), a payment method and tags, where the statement has them.
    public var categoryPath: [String]? = nil
    public var payment: String? = nil
    public var tags: [String] = []
    /// The account this row is of, where the file says (an OFX statement's BANKID/ACCTID).
    public var account: String? = nil
    /// What identifies this transaction across imports (see `StatementReader.keys`).
    public var importKey: String = ""

    public init(
        sheet: String, row: Int, date: DateTime, amount: Int64, kind: String, isRefund: Bool, currency: String,
        payee: String?, memo: String?, reference: String?, categoryPath: [String]? = nil, payment: String? = nil,
        tags: [String] = [], account: String? = nil, importKey: String = ""
    ) {
        (self.sheet, self.row, self.date, self.amount, self.kind, self.isRefund, self.currency) = (sheet, row, date, amount, kind, isRefund, currency)
        (self.payee, self.memo, self.reference, self.categoryPath, self.payment, self.tags) = (payee, memo, reference, categoryPath, payment, tags)
        (self.account, self.importKey) = (account, importKey)
    }
}

/// A row left out on purpose (a blank line, a total) or one that could not be read.
public struct StatementNote: Sendable, Equatable {
    public var sheet: String
    public var row: Int
    public var reason: String

    public init(sheet: String, row: Int, reason: String) { (self.sheet, self.row, self.reason) = (sheet, row, reason) }
}

/// What reading a statement file found.
public struct StatementContents: Sendable {
    public var rows: [StatementRow]
    /// Blank and total rows, left out.
    public var skipped: [StatementNote]
    /// Rows that look like transactions but cannot be read.
    public var bad: [StatementNote]
    /// The layout each sheet was read with.
    public var layouts: [(sheet: String, layout: String)]
    /// How the text was decoded (CSV: a `StatementEncoding`'s name; nil for a workbook).
    public var encoding: String?
    /// The ledger's account every row names (`accountId`), if the statement is of one.
    public var accountId: UUID?

    public init(rows: [StatementRow], skipped: [StatementNote], bad: [StatementNote], layouts: [(sheet: String, layout: String)], encoding: String?) {
        (self.rows, self.skipped, self.bad, self.layouts, self.encoding) = (rows, skipped, bad, layouts, encoding)
    }
}
