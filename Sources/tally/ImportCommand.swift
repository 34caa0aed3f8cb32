import ArgumentParser
import Foundation
import TallyCore
import TallyImport
import TallyLedger

/// `tally import csv|xlsx FILE`: a bank or card statement, each transaction once (docs/IMPORT.md).
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Import a bank or card statement: each transaction becomes an expense, once however often it is imported.",
        subcommands: [CSV.self, XLSX.self, OFX.self, CoreDataImportCommand.self, List.self, Mappings.self])

    /// How to read a statement, shared by the formats.
    struct ReadOptions: ParsableArguments {
        @Option(help: "A built-in layout (\(StatementLayout.builtIn.map(\.name).joined(separator: ", "))); default: recognised from the header.")
        var mapping: String?
        @Option(
            name: .customLong("column"),
            help: "ROLE=HEADER or ROLE=N (1-based position): \(ColumnRole.allCases.map(\.rawValue).joined(separator: ", ")). Repeatable.")
        var columns: [String] = []
        @Option(help: "The header's row number (0: no header row); default: found by its column names.") var headerRow: Int?
        @Option(help: "Currency of rows without a currency column (default: setting defaultCurrency, else KRW).") var currency: String?
        @Option(help: "Which account or card the statement is of: part of each row's import key (default: none).") var account = ""
        @Option(name: .customLong("account-id"), help: "The ledger's account the statement is of (its id): every imported row names it.")
        var accountID: String?
        @Option(help: "In a one-column statement, what a positive amount is: expense (card statements) or income (a bank's signed column).")
        var positiveIs = "expense"
        @Flag(help: "Show what would be created; write nothing.") var dryRun = false
        @Flag(help: "Import the readable rows and report the others (default: a bad row refuses the whole file).") var skipBadRows = false
        @Flag(help: "Print the report as JSON.") var json = false

        func options(currency fallback: String, ledger: Ledger) throws -> StatementOptions {
            var options = StatementOptions()
            if let mapping {
                let settings = try ledger.views.settings().map { (key: $0.key, value: $0.value) }
                guard let (layout, headerRow) = try SavedMapping.layout(named: mapping, settings: settings) else {
                    throw CLIError(
                        "invalid --mapping '\(mapping)': one of \(StatementLayout.builtIn.map(\.name).joined(separator: ", ")), or a name saved with tally import mappings save"
                    )
                }
                options.layouts = [layout]
                options.headerRow = headerRow
            }
            if !columns.isEmpty {
                var layout = options.layouts.count == 1 ? options.layouts[0] : StatementLayout.named("generic")!
                layout.name = "custom"
                for column in try columns.map(ImportCommand.column) {
                    if let position = column.position { layout.positions[column.role] = position - 1 } else { layout.headers[column.role] = [column.header!] }
                }
                options.layouts = [layout]
            }
            if let headerRow {
                guard (0...1_000_000).contains(headerRow) else { throw CLIError("invalid --header-row \(headerRow): 0 to 1000000") }
                options.headerRow = headerRow
            }
            let code = (currency ?? fallback).uppercased()
            guard Currency.isValid(code) else { throw CLIError("invalid --currency '\(code)': an ISO 4217 code") }
            options.currency = code
            options.account = account
            if let accountID {
                guard let uuid = UUID(uuidString: accountID) else { throw CLIError("invalid --account-id '\(accountID)': not an account's id") }
                options.accountId = uuid
            }
            guard ["expense", "income"].contains(positiveIs) else { throw CLIError("invalid --positive-is '\(positiveIs)': expense or income") }
            options.positiveIsIncome = positiveIs == "income"
            return options
        }
    }

    /// One `--column ROLE=HEADER` or `ROLE=N` (a 1-based position): exactly one of header and position.
    static func column(_ flag: String) throws -> (role: ColumnRole, header: String?, position: Int?) {
        let parts = flag.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, let role = ColumnRole(rawValue: parts[0]), !parts[1].isEmpty else {
            throw CLIError("invalid --column '\(flag)': ROLE=HEADER or ROLE=N, ROLE one of \(ColumnRole.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let position = Int(parts[1]) else { return (role, parts[1], nil) }
        guard (1...1_000).contains(position) else { throw CLIError("invalid --column '\(flag)': a position is 1 to 1000") }
        return (role, nil, position)
    }

    /// Reads the file, imports it, prints the report.
    static func run(format: String, file: String, global: GlobalOptions, read: ReadOptions, configure: (inout StatementOptions) throws -> Void = { _ in })
        async throws
    {
        guard let data = FileManager.default.contents(atPath: file) else { throw CLIError("cannot read \(file)") }
        guard data.count <= 512 << 20 else { throw CLIError("\(file) is larger than 512 MiB") }
        let ledger = try global.openLedger()
        defer { ledger.close() }
        var options = try read.options(currency: try ledger.defaultCurrency(), ledger: ledger)
        try configure(&options)
        let report: ImportReport
        do {
            let finalOptions = options
            report = try await ledger.importFile(
                Array(data), fileName: (file as NSString).lastPathComponent, format: format,
                dryRun: read.dryRun, skipBadRows: read.skipBadRows, actor: global.resolvedActor
            ) { bytes in
                try StatementReader.file(bytes, format: format, options: finalOptions)
            }
        } catch let error as StatementError {
            throw CLIError("\(file): \(error)")
        } catch let refused as StatementRefused {
            Output.standardError(Output.printable(refused.bad.map { "  \(where: $0): \($0.reason)\n" }.joined()))
            throw CLIError("\(file): \(refused.bad.count) row(s) cannot be read (listed above); nothing was imported. Fix them, or --skip-bad-rows")
        }
        ImportOutput.print(report, json: read.json)
    }

    struct CSV: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "csv", abstract: "A CSV statement (UTF-8 with or without BOM, UTF-16, or CP949/EUC-KR).")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var read: ReadOptions
        @Option(help: "utf-8, utf-16le, utf-16be, cp949 (euc-kr); default: detected.") var encoding: String?
        @Option(help: "The field separator: , ; or tab.") var delimiter = ","
        @Argument(help: "The statement file.") var file: String

        func run() async throws {
            let chosen = try encoding.map { name in
                guard let encoding = StatementEncoding(name: name) else { throw CLIError("invalid --encoding '\(name)': utf-8, utf-16le, utf-16be or cp949") }
                return encoding
            }
            let separator: UnicodeScalar
            switch delimiter {
            case ",": separator = ","
            case ";": separator = ";"
            case "tab", "\t": separator = "\t"
            default: throw CLIError("invalid --delimiter '\(delimiter)': , ; or tab")
            }
            try await ImportCommand.run(format: "csv", file: file, global: global, read: read) { options in
                options.encoding = chosen
                options.delimiter = separator
            }
        }
    }

    struct XLSX: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "xlsx", abstract: "An Excel workbook (.xlsx): every sheet, each sheet's name kept as the payment method.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var read: ReadOptions
        @Argument(help: "The statement file.") var file: String

        func run() async throws { try await ImportCommand.run(format: "xlsx", file: file, global: global, read: read) }
    }

    struct OFX: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "ofx", abstract: "An OFX or QFX statement: each transaction by its FITID.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var read: ReadOptions
        @Argument(help: "The statement file.") var file: String

        func run() async throws { try await ImportCommand.run(format: "ofx", file: file, global: global, read: read) }
    }

    /// `tally import mappings save NAME --column …`, `tally import mappings list`.
    struct Mappings: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Layouts saved by name (replicated), for --mapping NAME.", subcommands: [Save.self, ListSaved.self])

        struct Save: AsyncParsableCommand {
            static let configuration = CommandConfiguration(commandName: "save", abstract: "Save a layout: the header name or 1-based position of each column.")
            @OptionGroup var global: GlobalOptions
            @Argument(help: "Its name (letters, digits, - and _).") var name: String
            @Option(name: .customLong("column"), help: "ROLE=HEADER or ROLE=N (repeatable).") var columns: [String] = []
            @Option(help: "The header's row number (0: no header row).") var headerRow: Int?

            func run() async throws {
                let parsed = try columns.map(ImportCommand.column)
                guard !parsed.isEmpty else { throw CLIError("give at least one --column ROLE=HEADER") }
                if let headerRow, !(0...1_000_000).contains(headerRow) { throw CLIError("invalid --header-row \(headerRow): 0 to 1000000") }
                do {
                    let setting = try SavedMapping.setting(name, columns: parsed, headerRow: headerRow)
                    _ = try await global.withLedger { try await $0.setSetting(setting.key, json: setting.json, actor: global.resolvedActor) }
                } catch let error as TallyCore.ValidationError { throw CLIError("invalid \(error.field ?? "mapping"): \(error.message)") }
                print("Saved layout '\(name)': use --mapping \(name).")
            }
        }

        struct ListSaved: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "list", abstract: "The saved layouts (and the built-in ones).")
            @OptionGroup var global: GlobalOptions

            func run() throws {
                let saved = try global.openViews().settings().filter { $0.key.hasPrefix("importMapping.") }
                print(
                    Table.render(
                        header: ["NAME", "LAYOUT"],
                        rows: StatementLayout.builtIn.map { [$0.name, "(built in)"] }
                            + saved.map { [String($0.key.dropFirst("importMapping.".count)), $0.value] }))
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every import: when, by whom, which file, how many expenses.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON, as GET /v1/imports answers.") var json = false

        func run() throws {
            let views = try global.openViews()
            if json {
                print(try views.importsDocument().serialized)
                return
            }
            let rows = try views.imports().map { entity -> [String] in
                func text(_ name: PropertyName) -> String {
                    switch entity.value(name) {
                    case .string(let value)?: value
                    case .int(let value)?: String(value)
                    default: ""
                    }
                }
                return [entity.id.description, text(.name), text(.format), text(.count), String(text(.digest).prefix(16))]
            }
            print(Table.render(header: ["ID", "FILE", "FORMAT", "EXPENSES", "SHA-256"], rows: rows, rightAligned: [3]))
        }
    }
}

/// The report of an import, for people or as JSON.
enum ImportOutput {
    static func print(_ report: ImportReport, json: Bool) {
        if json {
            Swift.print(report.json.serialized)
            return
        }
        let layouts = report.layouts.map { $0.sheet.isEmpty ? $0.layout : "\($0.sheet): \($0.layout)" }.joined(separator: ", ")
        Swift.print("Layout: \(layouts)" + (report.encoding.map { "; encoding \($0)" } ?? ""))
        if report.dryRun {
            Swift.print(
                Table.render(
                    header: ["ROW", "DATE", "KIND", "AMOUNT", "CUR", "PAYEE"],
                    rows: report.created.map {
                        [
                            "\(where: $0.row)", String($0.row.date.description.prefix(16)), $0.row.isRefund ? "refund" : $0.row.kind,
                            String($0.row.amount), $0.row.currency, $0.row.payee ?? "",
                        ]
                    }, rightAligned: [3]))
        }
        for bad in report.bad { Swift.print("bad \(where: bad): \(bad.reason)") }
        let verb = report.dryRun ? "would create" : "created"
        Swift.print(
            "\(verb) \(report.created.count), already in the ledger \(report.duplicates.count), skipped \(report.skipped.count) (blank or total), bad \(report.bad.count)"
                + (report.importID.map { "; import \($0.lowercased)" } ?? ""))
    }
}

extension String.StringInterpolation {
    /// "sheet '홍길동' row 12", or "row 12" in a CSV file.
    mutating func appendInterpolation(where note: StatementNote) {
        appendLiteral(note.sheet.isEmpty ? "row \(note.row)" : "sheet '\(note.sheet)' row \(note.row)")
    }

    mutating func appendInterpolation(where row: StatementRow) {
        appendLiteral(row.sheet.isEmpty ? "row \(row.row)" : "sheet '\(row.sheet)' row \(row.row)")
    }
}
