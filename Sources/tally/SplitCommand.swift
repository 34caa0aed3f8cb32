import ArgumentParser
import Foundation
import TallyCore
import TallyLedger

/// `tally split EXPENSE --line AMOUNT[,CATEGORY[,MEMO]] …`: one payment split into lines of
/// their own categories; `tally splits`: every split receipt (issue 34, docs/HOUSEHOLD.md
/// "Split receipts").
struct SplitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "split", abstract: "Split an expense into lines of several categories (they must add up to it), or show its split.",
        discussion: """
            Each --line is AMOUNT[,CATEGORY_ID[,MEMO]]: the amount in minor units, the line's category (none: the expense's own), a note.
            With no --line, shows the split; with --clear, the expense is no longer split.
            Example: tally split EXPENSE_ID --line 80000,GROCERIES_ID --line 40000,HOUSEHOLD_ID,detergent
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The expense's id.") var id: String
    @Option(name: .customLong("line"), parsing: .unconditionalSingleValue, help: "AMOUNT[,CATEGORY_ID[,MEMO]] (repeat for each line).") var lines: [String] = []
    @Flag(help: "Remove the split: no lines.") var clear = false
    @Flag(help: "Print JSON, as GET /v1/expenses/{id}/lines answers.") var json = false

    func run() async throws {
        let expense = try FlagInput.id(id)
        if clear, !lines.isEmpty { throw CLIError("--clear takes no --line") }
        var shown: JSONText?
        if lines.isEmpty, !clear {
            shown = try global.openViews().splitReceiptDocument(expense: expense)
        } else {
            let split = try lines.map(Self.line)
            try await WriteOutput.reportingViewsBehind {
                shown = try await global.withLedger { try await $0.setLines(of: expense, split, actor: global.resolvedActor) }
            }
        }
        guard let receipt = shown else { return }
        if json { return print(receipt.serialized) }
        print(Self.describe(receipt))
    }

    /// `AMOUNT[,CATEGORY_ID[,MEMO]]` as a line (the memo may hold commas).
    static func line(_ text: String) throws -> Ledger.SplitLine {
        let parts = text.split(separator: ",", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard let amount = Int64(parts[0].trimmingCharacters(in: .whitespaces)), amount > 0 else {
            throw CLIError("invalid --line '\(text)': it starts with the amount in minor units, more than 0")
        }
        var category: UUID?
        if parts.count > 1, !parts[1].isEmpty, parts[1] != "none" {
            guard let uuid = UUID(uuidString: parts[1]) else { throw CLIError("invalid --line '\(text)': '\(parts[1])' is not a category id") }
            category = uuid
        }
        return Ledger.SplitLine(categoryId: category, amount: amount, memo: parts.count > 2 ? parts[2] : nil)
    }

    /// A receipt as text: the payment, its lines, and whether they add up.
    static func describe(_ receipt: JSONText) -> String {
        let currency = ReportCommand.string(receipt.member("currency")) ?? ""
        func money(_ value: JSONText?) -> String { ReportCommand.money(value, currency) }
        var out =
            "\(ReportCommand.string(receipt.member("date")) ?? "") \(ReportCommand.string(receipt.member("payee")) ?? "") \(money(receipt.member("amount"))) \(currency)"
        let lines = ReportCommand.items(receipt.member("lines"))
        if lines.isEmpty { return out + "\nNot split." }
        out +=
            "\n"
            + Table.render(
                header: ["AMOUNT", "CATEGORY", "MEMO", "LINE"],
                rows: lines.map {
                    [
                        money($0.member("amount")), ReportCommand.string($0.member("categoryId")) ?? "(the expense's)",
                        ReportCommand.string($0.member("memo")) ?? "",
                        ReportCommand.string($0.member("id")) ?? "",
                    ]
                }, rightAligned: [0])
        if case .bool(true)? = receipt.member("needsAttention") {
            out += "\nNeeds attention: the lines add up to \(money(receipt.member("assigned"))), not \(money(receipt.member("amount")))."
        }
        return out
    }
}

/// `tally splits`: every split receipt, those needing attention first.
struct SplitsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "splits", abstract: "Every split receipt, those whose lines no longer add up first.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var asOf: AsOfOption
    @Flag(help: "Print JSON, as GET /v1/splits answers.") var json = false

    func run() throws {
        let document = try asOf.openViews(global).splitReceiptsDocument()
        if json { return print(document.serialized) }
        let rows = ReportCommand.items(document.member("receipts")).map { receipt -> [String] in
            let currency = ReportCommand.string(receipt.member("currency")) ?? ""
            func money(_ name: String) -> String { ReportCommand.money(receipt.member(name), currency) }
            let status = if case .bool(true)? = receipt.member("needsAttention") { "needs attention" } else { "adds up" }
            return [
                String((ReportCommand.string(receipt.member("date")) ?? "").prefix(10)), ReportCommand.string(receipt.member("payee")) ?? "", money("amount"),
                money("assigned"), currency, status, ReportCommand.string(receipt.member("expenseId")) ?? "",
            ]
        }
        print(Table.render(header: ["DATE", "PAYEE", "AMOUNT", "LINES", "CUR", "STATUS", "EXPENSE"], rows: rows, rightAligned: [2, 3]))
        let unattached = ReportCommand.items(document.member("unattached")).count
        if unattached > 0 { print("\(unattached) line(s) name an expense this replica does not hold (not counted until it arrives).") }
    }
}
