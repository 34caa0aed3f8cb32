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

    /// The same, for CSV text before a CSV parser builds its records: one pass over the bytes,
    /// reading quotes as CSV.swift does — a `"` opens a quoted cell only as the cell's first
    /// character (elsewhere it is text), `""` inside one is a quote, and a line break (LF, CR or
    /// CR LF) outside quotes ends a record.
    static func checkCSV(_ text: String, delimiter: Unicode.Scalar) throws(StatementError) {
        guard delimiter.isASCII else { return }
        let separator = UInt8(delimiter.value), quote = UInt8(ascii: "\""), lineFeed = UInt8(ascii: "\n"), carriageReturn = UInt8(ascii: "\r")
        enum State { case cellStart, unquoted, quoted, quoteInQuoted }
        var (state, row, columns, cellBytes) = (State.cellStart, 1, 1, 0)
        var afterCarriageReturn = false
        for byte in text.utf8 {
            defer { afterCarriageReturn = byte == carriageReturn && state != .quoted }
            if state == .quoted {
                if byte == quote { state = .quoteInQuoted } else { cellBytes += 1 }
            } else if byte == quote && state == .cellStart {
                state = .quoted
            } else if byte == quote && state == .quoteInQuoted {
                (state, cellBytes) = (.quoted, cellBytes + 1)  // "" is a quote within the cell
            } else if byte == separator {
                (state, columns, cellBytes) = (.cellStart, columns + 1, 0)
                if columns > maxColumns {
                    throw StatementError("row \(row) has more than \(maxColumns) columns; a statement row may have at most \(maxColumns)")
                }
            } else if byte == lineFeed || byte == carriageReturn {
                if !(byte == lineFeed && afterCarriageReturn) { row += 1 }
                (state, columns, cellBytes) = (.cellStart, 1, 0)
            } else {
                // A lone quote inside a quoted cell followed by text (`"a"x`): CSV.swift reads on
                // inside the quotes, so a later line break is still the cell's — count it so.
                (state, cellBytes) = (state == .quoteInQuoted ? .quoted : state == .cellStart ? .unquoted : state, cellBytes + 1)
            }
            if cellBytes > maxCellBytes {
                throw StatementError("row \(row) column \(columns) holds more than \(maxCellBytes) bytes; a cell may hold at most \(maxCellBytes)")
            }
        }
    }
}
