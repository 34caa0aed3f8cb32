import TallyCore

/// Plain aligned text tables for human output. Cells are measured in terminal cells
/// (`DisplayWidth`), not characters, so Hangul, CJK and emoji line up.
enum Table {
    /// Columns padded to their widest cell; `rightAligned` columns (amounts) pad on the left.
    static func render(header: [String], rows: [[String]], rightAligned: Set<Int> = []) -> String {
        let header = header.map(flattened)
        let rows = rows.map { $0.map(flattened) }
        let widths = header.indices.map { column in
            ([header[column]] + rows.map { $0[column] }).map(DisplayWidth.of).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                DisplayWidth.padded(cell, to: widths[column], rightAligned: rightAligned.contains(column))
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }
        return ([line(header)] + rows.map(line)).joined(separator: "\n")
    }

    /// `key  value` lines with the keys aligned.
    static func keyValue(_ pairs: [(String, String)]) -> String {
        let pairs = pairs.map { (flattened($0.0), flattened($0.1)) }
        let width = pairs.map { DisplayWidth.of($0.0) }.max() ?? 0
        return pairs.map { DisplayWidth.padded($0.0, to: width) + "  " + $0.1 }.joined(separator: "\n")
    }

    /// A cell on one line: newlines and tabs (a memo may hold them) become spaces.
    private static func flattened(_ cell: String) -> String {
        String(cell.map { $0.isNewline || $0 == "\t" ? " " : $0 })
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
