import CSV
import Foundation
import TallyCore

/// A table of exchange rates in CSV (`tally rates import`): a header naming `date`, `from`
/// (or `currency`), `to` (or `toCurrency`) and `rate` columns, one rate a row. Encodings as
/// for statements; a row that cannot be read refuses the table, naming it.
public enum RateTable {
    public struct Row: Sendable {
        public var from: String
        public var to: String
        public var rate: String
        public var day: DateTime
    }

    public static func read(_ bytes: [UInt8], timeZone: TimeZone = .current) throws(StatementError) -> [Row] {
        let text = try StatementEncoding.decode(bytes).text
        let reader: CSVReader
        do { reader = try CSVReader(string: text, hasHeaderRow: false) } catch { throw StatementError("not a CSV file: \(error)") }
        guard let header = reader.next()?.map(StatementLayout.normalize) else { throw StatementError("the table is empty") }
        func column(_ names: [String]) throws(StatementError) -> Int {
            guard let index = header.firstIndex(where: names.contains) else {
                throw StatementError("the header names no \(names[0]) column (date, from, to, rate)")
            }
            return index
        }
        let (date, from, to, rate) = (try column(["date", "day"]), try column(["from", "currency"]), try column(["to", "tocurrency"]), try column(["rate"]))
        var rows: [Row] = []
        var number = 1
        while let cells = reader.next() {
            number += 1
            if cells.allSatisfy({ $0.trimmingCharacters(in: .whitespaces).isEmpty }) { continue }
            func cell(_ index: Int) -> String { cells.indices.contains(index) ? cells[index].trimmingCharacters(in: .whitespaces) : "" }
            let (fromCode, toCode) = (cell(from).uppercased(), cell(to).uppercased())
            guard Currency.isValid(fromCode), Currency.isValid(toCode), fromCode != toCode else {
                throw StatementError("row \(number): '\(fromCode)' to '\(toCode)' is not a pair of currencies")
            }
            guard FieldKind.normalDecimal(cell(rate)) != nil else { throw StatementError("row \(number): '\(cell(rate).prefix(30))' is not a rate") }
            let day: DateTime
            do { day = try StatementValues.date(cell(date), timeZone: timeZone, serialDays: false) } catch { throw StatementError("row \(number): \(error)") }
            rows.append(Row(from: fromCode, to: toCode, rate: cell(rate), day: day))
            guard rows.count <= 1_000_000 else { throw StatementError("more than 1,000,000 rates") }
        }
        if let error = reader.error { throw StatementError("not a CSV file: \(error)") }
        return rows
    }
}
