import ArgumentParser
import Foundation
import TallyCore
import TallyImport
import TallyLedger

/// `tally report [--to YYYY-MM] [--months 12] [--json | --csv]`: spending per category per
/// month, income against spending, and the net worth at each month's end (issue 34).
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report", abstract: "Spending per category per month, income against spending, and the net worth over the months.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var asOf: AsOfOption
    @Option(help: "The last month, YYYY-MM (default: this month).") var to: String?
    @Option(help: "How many months (1 to 120).") var months = 12
    @Flag(help: "Print JSON, as GET /v1/reports/months answers.") var json = false
    @Flag(help: "Print CSV for a spreadsheet: one row per category and currency, one column per month.") var csv = false

    func run() throws {
        let document: JSONText
        do { document = try asOf.openViews(global).reportDocument(to: to, count: months) } catch let error as TallyCore.ValidationError {
            throw CLIError("invalid --\(error.field ?? "to"): \(error.message)")
        }
        if json { return print(document.serialized) }
        let monthList = Self.strings(document.member("months"))
        var rows: [[String]] = []
        for category in Self.items(document.member("categories")) {
            let name = Self.string(category.member("name")) ?? "(none)"
            rows.append([name, Self.string(category.member("currency")) ?? ""] + Self.numbers(category.member("expense")))
        }
        for line in Self.items(document.member("trend")) {
            let currency = Self.string(line.member("currency")) ?? ""
            for part in ["income", "expense", "net"] { rows.append(["= \(part)", currency] + Self.numbers(line.member(part))) }
        }
        let header = ["CATEGORY", "CUR"] + monthList
        if csv {
            // The category's name is free text: the writer guards it against formulas.
            try Output.standardOutput(Data(try StatementWriter.csv(CellTable(header: header, textColumns: [0], rows: rows))))
            return
        }
        print(Table.render(header: header, rows: rows, rightAligned: Set(2..<header.count)))
    }

    /// The items of an array (raw text, as the views write lists, is parsed first).
    static func items(_ value: JSONText?) -> [JSONText] {
        switch value {
        case .array(let items)?: return items
        case .raw(let text)?:
            guard case .array(let items)? = try? StrictJSON.parse(Array(text.utf8)) else { return [] }
            return items.map(JSONText.init)
        default: return []
        }
    }
    static func string(_ value: JSONText?) -> String? { if case .string(let text)? = value { text } else { nil } }
    /// An amount member of a document in `currency`'s format, or `otherwise` where it is not a
    /// whole number (a sum too large for one, written as null; or not there).
    static func money(_ value: JSONText?, _ currency: String, otherwise: String = "(overflow)") -> String {
        guard case .int(let amount)? = value else { return otherwise }
        return Currency.format(amount, currency: currency)
    }
    static func strings(_ value: JSONText?) -> [String] { items(value).compactMap(string) }
    static func numbers(_ value: JSONText?) -> [String] {
        items(value).map { if case .int(let number) = $0 { String(number) } else { "(overflow)" } }
    }
}
