import ArgumentParser
import TallyCore

struct ExpenseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "expense", abstract: "Add, change or delete a transaction line.",
        subcommands: [AddEntity<Fields>.self, UpdateEntity<Fields>.self, DeleteEntity<Fields>.self])

    /// Flags named after the expense's fields (help and rules from `EntitySpec.expense`); every
    /// one optional so `update` can take just some.
    struct Fields: EntityFlags {
        static let entityType = EntityType.expense
        @Option(help: FlagInput.help(.expense, .kind)) var kind: String?
        @Option(parsing: .unconditional, help: FlagInput.help(.expense, .amount)) var amount: String?
        @Option(help: FlagInput.help(.expense, .currency)) var currency: String?
        @Option(help: FlagInput.help(.expense, .date)) var date: String?
        @Option(help: FlagInput.help(.expense, .categoryId)) var category: String?
        @Option(help: FlagInput.help(.expense, .payee)) var payee: String?
        @Option(help: FlagInput.help(.expense, .payment)) var payment: String?
        @Option(help: FlagInput.help(.expense, .memo)) var memo: String?
        @Option(name: .customLong("tag"), help: "A tag (repeatable; on update, replaces all tags).") var tags: [String] = []
        @Option(help: FlagInput.help(.expense, .repeat)) var `repeat`: String?
        @Option(help: FlagInput.help(.expense, .accountId)) var account: String?
        @Option(help: FlagInput.help(.expense, .paidBy)) var paidBy: String?
        @Option(help: FlagInput.help(.expense, .split)) var split: String?
        @Option(help: FlagInput.help(.expense, .shares)) var shares: String?
        @Option(name: .customLong("attach"), help: "A receipt photo or file to store and attach (repeatable; on update, replaces the attachments).")
        var attach: [String] = []

        var attachmentFiles: [String] { attach }

        func properties() throws -> PropertyMap {
            var map = try FlagInput.properties(
                .expense,
                [
                    (.kind, "kind", kind), (.amount, "amount", amount), (.currency, "currency", currency), (.date, "date", date),
                    (.categoryId, "category", category), (.payee, "payee", payee), (.payment, "payment", payment), (.memo, "memo", memo),
                    (.repeat, "repeat", `repeat`), (.accountId, "account", account), (.paidBy, "paid-by", paidBy), (.split, "split", split),
                    (.shares, "shares", shares),
                ])
            if !tags.isEmpty { map[.tags] = .strings(tags) }
            return map
        }

        func checkCreate() throws {
            guard amount != nil else { throw CLIError("missing --amount: an expense needs an amount in minor units") }
        }
    }
}
