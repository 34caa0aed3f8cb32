import ArgumentParser
import Foundation
import TallyCore
import TallyImport
import TallyLedger

/// `tally export csv|jsonl`: the ledger's data out, to a file or standard output.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Take the data out: expenses as CSV (UTF-8 with BOM, for spreadsheets), or every entity as JSON lines.",
        subcommands: [CSV.self, JSONLines.self])

    static func write(_ bytes: [UInt8], to path: String?) throws {
        if let path { try Output.file(Data(bytes), at: path) } else { try Output.standardOutput(Data(bytes)) }
    }

    struct CSV: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "csv",
            abstract: "Expenses, oldest first: date, kind, amount, currency, category path, payee, payment, memo, tags, attachment digests, id.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "From this date (ISO 8601, inclusive).") var from: String?
        @Option(help: "To this date (ISO 8601, exclusive).") var to: String?
        @Option(help: "Write to this file instead of standard output.") var out: String?

        static func date(_ text: String?, _ flag: String) throws -> DateTime? {
            try text.map { text in
                guard let date = DateTime(iso8601: text) else { throw CLIError("invalid --\(flag) '\(text)': an ISO 8601 date or date-time") }
                return date
            }
        }

        func run() throws {
            try ExportCommand.write(
                try StatementWriter.csv(try global.openViews().exportTable(from: try Self.date(from, "from"), to: try Self.date(to, "to"))), to: out)
        }
    }

    struct JSONLines: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "jsonl", abstract: "Every live entity, one JSON object a line: {type, id, …fields}.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Only the expenses from this date (ISO 8601, inclusive); every other entity still.") var from: String?
        @Option(help: "Only the expenses before this date (ISO 8601, exclusive).") var to: String?
        @Option(help: "Write to this file instead of standard output.") var out: String?

        func run() throws {
            try ExportCommand.write(try global.openViews().exportJSONLines(from: try CSV.date(from, "from"), to: try CSV.date(to, "to")), to: out)
        }
    }
}
