/// What reading one statement may cost (issue 29): a bank's or a card's statement has a few
/// dozen columns of short cells, so a row of a million columns or a cell of megabytes is not
/// a statement; and however it is shaped, reading stops at a time limit. Each bound is checked
/// as the file is read, before the work it would cause, and refused with a message naming it.
public struct StatementBounds: Sendable {
    /// The most columns a row may have.
    public static let maxColumns = 256
    /// The most bytes of UTF-8 a cell may hold.
    public static let maxCellBytes = 4_096

    /// When reading must have finished.
    let deadline: ContinuousClock.Instant
    let timeLimit: Duration

    /// Bounds for a read starting now that may take `timeLimit`.
    public init(timeLimit: Duration) {
        (self.timeLimit, deadline) = (timeLimit, .now + timeLimit)
    }

    /// Throws once the time is up (called once a row).
    func checkTime(row: Int) throws(StatementError) {
        guard ContinuousClock.now <= deadline else {
            throw StatementError("reading the statement took longer than \(timeLimit) (stopped at row \(row)); split it into smaller files")
        }
    }

    /// Throws if a row has too many cells or a cell too many bytes.
    static func check(_ cells: [String], row: Int, sheet: String) throws(StatementError) {
        let label = sheet.isEmpty ? "row \(row)" : "sheet '\(sheet)' row \(row)"
        if cells.count > maxColumns { throw StatementError("\(label) has \(cells.count) columns; a statement row may have at most \(maxColumns)") }
        if let wide = cells.firstIndex(where: { $0.utf8.count > maxCellBytes }) {
            throw StatementError("\(label) column \(wide + 1) holds \(cells[wide].utf8.count) bytes; a cell may hold at most \(maxCellBytes)")
        }
    }

    /// The same, for CSV text before a CSV parser builds its records: one pass over the bytes
    /// counting delimiters and cell lengths outside and inside quotes (`"` quotes a cell, `""`
    /// is a quote within one, a line break outside quotes ends a record).
    static func checkCSV(_ text: String, delimiter: Unicode.Scalar) throws(StatementError) {
        guard delimiter.isASCII else { return }
        let separator = UInt8(delimiter.value), quote = UInt8(ascii: "\""), newline = UInt8(ascii: "\n")
        var (row, columns, cellBytes, quoted) = (1, 1, 0, false)
        for byte in text.utf8 {
            if byte == quote {
                quoted.toggle()  // a doubled quote toggles twice: still inside
            } else if !quoted && byte == separator {
                columns += 1
                cellBytes = 0
                if columns > maxColumns { throw StatementError("row \(row) has more than \(maxColumns) columns; a statement row may have at most \(maxColumns)") }
                continue
            } else if !quoted && byte == newline {
                (row, columns, cellBytes) = (row + 1, 1, 0)
                continue
            }
            cellBytes += 1
            if cellBytes > maxCellBytes + 2 {  // + 2: the quotes around a quoted cell
                throw StatementError("row \(row) column \(columns) holds more than \(maxCellBytes) bytes; a cell may hold at most \(maxCellBytes)")
            }
        }
    }
}
