import ArgumentParser
import Foundation
import TallyCore
import TallyImport
import TallyLedger

/// `tally rates set|list|import`: exchange rates, replicated like everything else.
struct RatesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rates", abstract: "Exchange rates: set one, list them, or import a table; summaries convert with them (summary --in KRW).",
        subcommands: [Set.self, List.self, Import.self])

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One FROM is RATE TO from --date on (the same pair and day again replaces it).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The currency converted from, e.g. USD.") var from: String
        @Argument(help: "The currency converted to, e.g. KRW.") var to: String
        @Argument(help: "How many TO one FROM is, e.g. 1385.2.") var rate: String
        @Option(help: "The day it holds from (default: today).") var date: String?

        func run() async throws {
            let day =
                try date.map { text in
                    guard let day = DateTime(iso8601: text) else { throw CLIError("invalid --date '\(text)': an ISO 8601 date") }
                    return day
                } ?? .nowHere
            let entity: JSONText
            do {
                entity = try await global.withLedger {
                    try await $0.setRate(from: from.uppercased(), to: to.uppercased(), rate: rate, day: day, actor: global.resolvedActor)
                }
            } catch let error as TallyCore.ValidationError { throw CLIError("invalid \(error.field ?? "rate"): \(error.message)") }
            print(entity.serialized)
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every exchange rate.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var asOf: AsOfOption
        @Flag(help: "Print JSON, as GET /v1/rates answers.") var json = false

        func run() throws {
            let views = try asOf.openViews(global)
            if json {
                print(try views.ratesDocument().serialized)
                return
            }
            let rates = try views.rates()
            print(
                Table.render(
                    header: ["FROM", "TO", "RATE", "FROM DAY", "ID"],
                    rows: rates.map { rate in
                        guard case .object(let fields) = rate else { return [] }
                        func text(_ name: String) -> String { if case .string(let value)? = fields.first(where: { $0.0 == name })?.1 { value } else { "" } }
                        return [text("currency"), text("toCurrency"), text("rate"), String(text("date").prefix(10)), text("id")]
                    }, rightAligned: [2]))
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A CSV table of rates: columns date, from, to, rate (one durable batch; a bad row refuses it).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The table.") var file: String

        func run() async throws {
            guard let data = FileManager.default.contents(atPath: file) else { throw CLIError("cannot read \(file)") }
            let rows: [RateTable.Row]
            do { rows = try RateTable.read(Array(data)) } catch { throw CLIError("\(file): \(error)") }
            let written = try await global.withLedger { ledger in
                try await ledger.setRates(rows.map { ($0.from, $0.to, $0.rate, $0.day) }, actor: global.resolvedActor)
            }
            print("Set \(written) rate(s) from \(rows.count) row(s).")
        }
    }
}
