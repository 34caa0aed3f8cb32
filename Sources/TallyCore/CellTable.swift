/// Rows of text cells under a header — what an export holds before a file format writes it
/// (`TallyImport.StatementWriter.csv`).
public struct CellTable: Sendable, Equatable {
    public var header: [String]
    /// The columns that hold free text (a payee, a memo): a spreadsheet must not take them as
    /// formulas, so the writer guards them.
    public var textColumns: Set<Int>
    public var rows: [[String]]

    public init(header: [String], textColumns: Set<Int>, rows: [[String]]) {
        (self.header, self.textColumns, self.rows) = (header, textColumns, rows)
    }
}
