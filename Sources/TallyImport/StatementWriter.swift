import CSV
import Foundation
import TallyCore

/// Writes rows as CSV (CSV.swift's writer: fields quoted where they must be), in UTF-8 with a
/// byte-order mark — so spreadsheet programs open Korean text as Korean, not mojibake. A text
/// cell a spreadsheet would run as a formula (starting with = + - @, a tab or a carriage
/// return) is written with a `'` before it, which spreadsheets show as text and the importer
/// takes off again (`StatementReader.unguarded`); an unpaired directional control (one an
/// event from before schema version 5 may hold) is left out, so it cannot reorder the cells
/// after it (`BidiControls.neutralized`).
public enum StatementWriter {
    /// `table` as CSV.
    public static func csv(_ table: CellTable) throws -> [UInt8] {
        try csv(header: table.header, textColumns: table.textColumns, rows: table.rows)
    }

    public static func csv(header: [String], textColumns: Set<Int> = [], rows: [[String]]) throws -> [UInt8] {
        let stream = OutputStream(toMemory: ())
        let writer = try CSVWriter(stream: stream, delimiter: ",", newline: .crlf)
        try writer.write(row: header)
        for row in rows { try writer.write(row: row.enumerated().map { textColumns.contains($0.offset) ? guarded($0.element) : $0.element }) }
        writer.stream.close()
        let data = stream.property(forKey: .dataWrittenToMemoryStreamKey) as? Data ?? Data()
        return [0xEF, 0xBB, 0xBF] + Array(data)
    }

    /// Characters a spreadsheet reads a cell starting with as a formula.
    static let formulaStarts: Set<Character> = ["=", "+", "-", "@", "\t", "\r", "'"]

    /// `text` without unpaired directional controls, with a `'` before it if it starts like a
    /// formula (or with a `'` already).
    static func guarded(_ text: String) -> String {
        let text = BidiControls.neutralized(text)
        return text.first.map(formulaStarts.contains) == true ? "'" + text : text
    }
}

extension StatementReader {
    /// A cell an export guarded (`StatementWriter.guarded`) without its guard.
    static func unguarded(_ text: String) -> String {
        guard text.hasPrefix("'"), let next = text.dropFirst().first, StatementWriter.formulaStarts.contains(next) else { return text }
        return String(text.dropFirst())
    }
}
