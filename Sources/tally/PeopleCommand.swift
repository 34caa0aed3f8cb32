import ArgumentParser
import Foundation
import TallyCore
import TallyLedger

/// `tally people`: who owes whom, and the transfers that settle it; `tally settlement
/// add|update|delete`: one person paying another back (issue 34).
struct PeopleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "people", abstract: "Who paid and who owes, and the fewest transfers that settle it.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var asOf: AsOfOption
    @Flag(help: "Print JSON, as GET /v1/people answers.") var json = false

    func run() throws {
        let document = try asOf.openViews(global).peopleDocument()
        if json { return print(document.serialized) }
        let balances = ReportCommand.items(document.member("items")).map { item -> [String] in
            let currency = ReportCommand.string(item.member("currency")) ?? ""
            guard case .int(let balance)? = item.member("balance") else { return [] }
            return [ReportCommand.string(item.member("name")) ?? "", Currency.format(balance, currency: currency), currency]
        }
        print(Table.render(header: ["PERSON", "BALANCE", "CUR"], rows: balances, rightAligned: [1]))
        for step in ReportCommand.items(document.member("settle")) {
            let currency = ReportCommand.string(step.member("currency")) ?? ""
            guard case .int(let amount)? = step.member("amount") else { continue }
            print(
                "\(ReportCommand.string(step.member("from")) ?? "") pays \(ReportCommand.string(step.member("to")) ?? "") \(Currency.format(amount, currency: currency)) \(currency)"
            )
        }
        let attention = ReportCommand.strings(document.member("needsAttention"))
        if !attention.isEmpty { print("Needs attention (parts do not add up): \(attention.joined(separator: ", "))") }
    }
}

struct SettlementCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settlement", abstract: "Add, change or delete a settlement: one person paying another back.",
        subcommands: [AddEntity<Fields>.self, UpdateEntity<Fields>.self, DeleteEntity<Fields>.self])

    struct Fields: EntityFlags {
        static let entityType = EntityType.settlement
        @Option(help: FlagInput.help(.settlement, .paidBy)) var from: String?
        @Option(help: FlagInput.help(.settlement, .paidTo)) var to: String?
        @Option(parsing: .unconditional, help: FlagInput.help(.settlement, .amount)) var amount: String?
        @Option(help: FlagInput.help(.settlement, .currency)) var currency: String?
        @Option(help: FlagInput.help(.settlement, .date)) var date: String?
        @Option(help: FlagInput.help(.settlement, .memo)) var memo: String?

        func properties() throws -> PropertyMap {
            try FlagInput.properties(
                .settlement,
                [
                    (.paidBy, "from", from), (.paidTo, "to", to), (.amount, "amount", amount), (.currency, "currency", currency), (.date, "date", date),
                    (.memo, "memo", memo),
                ])
        }

        func checkCreate() throws {
            guard from != nil, to != nil, amount != nil else { throw CLIError("a settlement needs --from, --to and --amount") }
        }
    }
}
