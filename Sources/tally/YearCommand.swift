import ArgumentParser
import Foundation
import TallyCore
import TallyLedger

/// `tally year [YYYY] [--json]`: the year in review (issue 34) — income and spending against the
/// year before, the busiest month, where the money went, the largest expenses, the net worth.
struct YearCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "year", abstract: "The year in review: a year's money against the year before.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var asOf: AsOfOption
    @Argument(help: "The year, YYYY (default: this year).") var year: String?
    @Flag(help: "Print JSON, as GET /v1/reports/year answers.") var json = false

    func run() throws {
        let document: JSONText
        do { document = try asOf.openViews(global).yearInReviewDocument(year: year) } catch let error as TallyCore.ValidationError {
            throw CLIError("invalid year: \(error.message)")
        }
        if json { return print(document.serialized) }
        let year = ReportCommand.string(document.member("year")) ?? ""
        let currencies = ReportCommand.items(document.member("currencies"))
        if currencies.isEmpty { return print("Nothing was recorded in \(year).") }
        for entry in currencies {
            let currency = ReportCommand.string(entry.member("currency")) ?? ""
            // A sum too large for a whole number is null in the document: "(overflow)".
            func money(_ value: JSONText?) -> String { ReportCommand.money(value, currency) }
            print("\(year) in \(currency)")
            print("  Income \(money(entry.member("income"))), spending \(money(entry.member("expense"))), net \(money(entry.member("net")))")
            if let previous = entry.member("previous") {
                print("  The year before: income \(money(previous.member("income"))), spending \(money(previous.member("expense")))")
            }
            if let busiest = entry.member("busiestMonth"), let month = ReportCommand.string(busiest.member("month")) {
                print("  Busiest month: \(month) (\(money(busiest.member("expense"))))")
            }
            let categories = ReportCommand.items(entry.member("topCategories")).map { category -> [String] in
                let share = if case .double(let value)? = category.member("share") { "\(value)%" } else { "" }
                return [ReportCommand.string(category.member("name")) ?? "(none)", money(category.member("expense")), share]
            }
            if !categories.isEmpty { print(Table.render(header: ["WHERE IT WENT", "SPENT", "SHARE"], rows: categories, rightAligned: [1, 2])) }
            let largest = ReportCommand.items(entry.member("largest")).map { expense -> [String] in
                [
                    String((ReportCommand.string(expense.member("date")) ?? "").prefix(10)), ReportCommand.string(expense.member("payee")) ?? "",
                    money(expense.member("amount")),
                ]
            }
            if !largest.isEmpty { print(Table.render(header: ["LARGEST", "PAYEE", "AMOUNT"], rows: largest, rightAligned: [2])) }
            print("")
        }
        let start = ReportCommand.items(document.member("netWorth")?.member("start"))
        let end = ReportCommand.items(document.member("netWorth")?.member("end"))
        for total in end {
            let currency = ReportCommand.string(total.member("currency")) ?? ""
            let before = start.first { ReportCommand.string($0.member("currency")) == currency }
            // No balance in the currency at the start: none yet, 0.
            let atStart = before.map { ReportCommand.money($0.member("balance"), currency) } ?? Currency.format(0, currency: currency)
            print("Net worth in \(currency): \(atStart) at the start, \(ReportCommand.money(total.member("balance"), currency)) at the end")
        }
    }
}
