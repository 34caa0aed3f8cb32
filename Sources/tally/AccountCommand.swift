import ArgumentParser
import Foundation
import TallyCore
import TallyLedger

/// `tally account add|update|delete`: where money is — a bank account, a card, cash, savings,
/// a loan (issue 34, docs/HOUSEHOLD.md "Accounts").
struct AccountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account", abstract: "Add, change or delete an account (bank, card, cash, savings or loan).",
        subcommands: [AddEntity<Fields>.self, UpdateEntity<Fields>.self, DeleteEntity<Fields>.self])

    struct Fields: EntityFlags {
        static let entityType = EntityType.account
        @Option(help: FlagInput.help(.account, .name)) var name: String?
        @Option(help: FlagInput.help(.account, .kind)) var kind: String?
        @Option(help: FlagInput.help(.account, .currency)) var currency: String?
        @Option(parsing: .unconditional, help: FlagInput.help(.account, .openingBalance)) var openingBalance: String?
        @Option(help: FlagInput.help(.account, .openingDate)) var openingDate: String?
        @Option(help: FlagInput.help(.account, .isArchived)) var archived: String?
        @Option(help: FlagInput.help(.account, .closingDay)) var closingDay: String?
        @Option(help: FlagInput.help(.account, .paymentDay)) var paymentDay: String?
        @Option(help: FlagInput.help(.account, .reconciledThrough)) var reconciledThrough: String?
        @Option(parsing: .unconditional, help: FlagInput.help(.account, .statementBalance)) var statementBalance: String?

        func properties() throws -> PropertyMap {
            try FlagInput.properties(
                .account,
                [
                    (.name, "name", name), (.kind, "kind", kind), (.currency, "currency", currency), (.openingBalance, "opening-balance", openingBalance),
                    (.openingDate, "opening-date", openingDate), (.isArchived, "archived", archived),
                    (.closingDay, "closing-day", closingDay), (.paymentDay, "payment-day", paymentDay),
                    (.reconciledThrough, "reconciled-through", reconciledThrough), (.statementBalance, "statement-balance", statementBalance),
                ])
        }

        func checkCreate() throws {
            guard name != nil else { throw CLIError("missing --name: an account needs a name") }
        }
    }
}

/// `tally transfer add|update|delete`: money moved between two accounts — not spending.
struct TransferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfer", abstract: "Add, change or delete a transfer between two accounts (not spending).",
        subcommands: [AddEntity<Fields>.self, UpdateEntity<Fields>.self, DeleteEntity<Fields>.self])

    struct Fields: EntityFlags {
        static let entityType = EntityType.transfer
        @Option(help: FlagInput.help(.transfer, .accountId)) var from: String?
        @Option(help: FlagInput.help(.transfer, .toAccountId)) var to: String?
        @Option(parsing: .unconditional, help: FlagInput.help(.transfer, .amount)) var amount: String?
        @Option(parsing: .unconditional, help: FlagInput.help(.transfer, .toAmount)) var toAmount: String?
        @Option(help: FlagInput.help(.transfer, .date)) var date: String?
        @Option(help: FlagInput.help(.transfer, .memo)) var memo: String?

        func properties() throws -> PropertyMap {
            try FlagInput.properties(
                .transfer,
                [
                    (.accountId, "from", from), (.toAccountId, "to", to), (.amount, "amount", amount), (.toAmount, "to-amount", toAmount),
                    (.date, "date", date), (.memo, "memo", memo),
                ])
        }

        func checkCreate() throws {
            guard from != nil, to != nil, amount != nil else { throw CLIError("a transfer needs --from, --to and --amount") }
        }
    }
}

/// `tally accounts list|balances`.
struct AccountsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accounts", abstract: "List accounts, their balances, a card's bills, or one's reconciliation.",
        subcommands: [List.self, Balances.self, Bills.self, Reconciliation.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every account.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var asOf: AsOfOption
        @Flag(help: "Print JSON, as GET /v1/accounts answers.") var json = false

        func run() throws {
            let views = try asOf.openViews(global)
            let document = try views.accountsDocument()
            if json { return print(document.serialized) }
            let balances = try views.balancesDocument(at: nil, into: nil)
            print(AccountsCommand.table(balances))
        }
    }

    struct Balances: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every account's balance at a moment, the totals per currency, and the net worth.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var asOf: AsOfOption
        @Option(help: "A day (its end) or a date-time; default now.") var at: String?
        @Option(name: .customLong("in"), help: "The net worth in this currency (converted at each day's rate).") var into: String?
        @Flag(help: "Print JSON, as GET /v1/balances answers.") var json = false

        func run() throws {
            let document: JSONText
            do { document = try asOf.openViews(global).balancesDocument(at: at, into: into) } catch let error as TallyCore.ValidationError {
                throw CLIError("invalid --\(error.field == "in" ? "in" : "at"): \(error.message)")
            }
            if json { return print(document.serialized) }
            print(AccountsCommand.table(document))
        }
    }

    struct Bills: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A card's bills: each statement's cycle, due day, what was charged, cancelled and paid, and whether it is paid.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var asOf: AsOfOption
        @Argument(help: "The card's id.") var id: String
        @Option(help: "The first statement month, YYYY-MM (default: six months before --to).") var from: String?
        @Option(help: "The last statement month, YYYY-MM (default: next month).") var to: String?
        @Flag(help: "Print JSON, as GET /v1/accounts/{id}/bills answers.") var json = false

        func run() throws {
            let (views, card) = (try asOf.openViews(global), try FlagInput.id(id))
            let document: JSONText
            do { document = try views.cardBillsDocument(accountID: card, from: from, to: to) } catch let error as TallyCore.ValidationError {
                throw CLIError(error.field == "id" ? error.message : "invalid --\(error.field ?? "from"): \(error.message)")
            }
            if json { return print(document.serialized) }
            let currency = ReportCommand.string(try views.entityJSON(.account, id: card)?.member("currency")) ?? ""
            func money(_ bill: JSONText, _ name: String) -> String { ReportCommand.money(bill.member(name), currency) }
            let rows = ReportCommand.items(document.member("items")).map { bill -> [String] in
                [
                    ReportCommand.string(bill.member("month")) ?? "",
                    "\(ReportCommand.string(bill.member("from")) ?? "") – \(ReportCommand.string(bill.member("to")) ?? "")",
                    ReportCommand.string(bill.member("due")) ?? "", money(bill, "charged"), money(bill, "cancelled"), money(bill, "amount"),
                    money(bill, "paid"), ReportCommand.string(bill.member("status")) ?? "",
                ]
            }
            print(
                Table.render(
                    header: ["STATEMENT", "CYCLE", "DUE", "CHARGED", "CANCELLED", "AMOUNT", "PAID", "STATUS"], rows: rows, rightAligned: [3, 4, 5, 6]))
        }
    }

    struct Reconciliation: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "An account against its statement: the difference, and the cleared lines changed since it was reconciled.",
            discussion: "Reconcile with: tally account update ID --reconciled-through DAY --statement-balance AMOUNT")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var asOf: AsOfOption
        @Argument(help: "The account's id.") var id: String
        @Flag(help: "Print JSON, as GET /v1/accounts/{id}/reconciliation answers.") var json = false

        func run() throws {
            let document = try asOf.openViews(global).reconciliationDocument(accountID: try FlagInput.id(id))
            if json { return print(document.serialized) }
            let currency = ReportCommand.string(document.member("currency")) ?? ""
            func money(_ name: String) -> String {
                guard case .int = document.member(name) else { return "-" }
                return ReportCommand.money(document.member(name), currency) + " " + currency
            }
            guard let through = ReportCommand.string(document.member("reconciledThrough")) else {
                return print("Not reconciled. Reconcile with: tally account update \(id) --reconciled-through DAY --statement-balance AMOUNT")
            }
            print("Reconciled through \(through)")
            print("Statement balance: \(money("statementBalance"))")
            print("Balance then:      \(money("balance"))")
            print("Difference:        \(money("difference"))")
            if case .int(let cleared)? = document.member("clearedCount") { print("Cleared lines:     \(cleared)") }
            let changed = ReportCommand.items(document.member("changedSince")).map { line -> [String] in
                guard case .int(let amount)? = line.member("amount") else { return [] }
                return [
                    ReportCommand.string(line.member("changedAt")) ?? "", ReportCommand.string(line.member("type")) ?? "",
                    ReportCommand.string(line.member("date")) ?? "", Currency.format(amount, currency: currency), ReportCommand.string(line.member("id")) ?? "",
                ]
            }
            if !changed.isEmpty {
                print("\nChanged after it was reconciled:")
                print(Table.render(header: ["CHANGED", "TYPE", "DATE", "AMOUNT", "ID"], rows: changed, rightAligned: [3]))
            }
        }
    }

    /// The balances document as a table, then the totals and the net worth.
    static func table(_ document: JSONText) -> String {
        guard case .object(let fields) = document else { return "" }
        func field(_ object: JSONText, _ name: String) -> JSONText? {
            if case .object(let pairs) = object { return pairs.first { $0.0 == name }?.1 } else { return nil }
        }
        func text(_ value: JSONText?) -> String {
            switch value {
            case .string(let text)?: text
            case .int(let number)?: String(number)
            case .bool(let flag)?: flag ? "yes" : ""
            default: ""
            }
        }
        func money(_ object: JSONText, _ amountKey: String, _ currencyKey: String = "currency") -> String {
            ReportCommand.money(field(object, amountKey), text(field(object, currencyKey)))
        }
        var out = ""
        if case .array(let items)? = fields.first(where: { $0.0 == "items" })?.1 {
            out += Table.render(
                header: ["ACCOUNT", "KIND", "BALANCE", "CUR", "ARCHIVED", "ID"],
                rows: items.map {
                    [
                        text(field($0, "name")), text(field($0, "kind")), money($0, "balance"), text(field($0, "currency")), text(field($0, "isArchived")),
                        text(field($0, "id")),
                    ]
                },
                rightAligned: [2])
        }
        if case .array(let totals)? = fields.first(where: { $0.0 == "totals" })?.1 {
            for total in totals { out += "\nTotal \(text(field(total, "currency"))): \(money(total, "balance"))" }
        }
        if let worth = fields.first(where: { $0.0 == "netWorth" })?.1 {
            out += "\nNet worth: \(money(worth, "amount"))"
            if case .array(let left)? = field(worth, "unconverted"), !left.isEmpty { out += " (\(left.count) account(s) without a rate left out)" }
        }
        return out
    }
}

/// `tally transfers list`.
struct TransfersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "transfers", abstract: "List transfers.", subcommands: [List.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The latest transfers, newest first (JSON as GET /v1/transfers answers).")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var asOf: AsOfOption
        @Option(help: "At most this many (1 to \(Limits.maxPageSize)).") var limit = Limits.defaultPageSize

        func run() throws {
            do { print(try asOf.openViews(global).transfersDocument(limit: limit).serialized) } catch let error as TallyCore.ValidationError {
                throw CLIError("invalid --limit: \(error.message)")
            }
        }
    }
}
