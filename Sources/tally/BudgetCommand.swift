import ArgumentParser
import Foundation
import TallyCore
import TallyLedger
import TallyStore

/// `tally budget add|update|delete`: a monthly budget for a category (or all spending).
struct BudgetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "budget", abstract: "Add, change or delete a monthly budget (a category's, or with no category all spending's).",
        subcommands: [AddEntity<Fields>.self, UpdateEntity<Fields>.self, DeleteEntity<Fields>.self])

    struct Fields: EntityFlags {
        static let entityType = EntityType.budget
        @Option(help: FlagInput.help(.budget, .categoryId)) var category: String?
        @Option(help: FlagInput.help(.budget, .amount)) var amount: String?
        @Option(help: FlagInput.help(.budget, .currency)) var currency: String?
        @Option(help: FlagInput.help(.budget, .fromMonth)) var from: String?
        @Option(help: FlagInput.help(.budget, .toMonth)) var to: String?
        @Option(help: "Only this month, YYYY-MM (sets both --from and --to).") var month: String?

        func properties() throws -> PropertyMap {
            if month != nil, from != nil || to != nil { throw CLIError("--month sets both --from and --to; give one or the others") }
            return try FlagInput.properties(
                .budget,
                [
                    (.categoryId, "category", category), (.amount, "amount", amount), (.currency, "currency", currency),
                    (.fromMonth, "from", month ?? from), (.toMonth, "to", month ?? to),
                ])
        }

        func checkCreate() throws {
            guard amount != nil else { throw CLIError("missing --amount: a budget needs an amount per month") }
        }
    }
}

/// `tally budgets list [--month M]`: every budget as written, or those that apply to a month
/// with what was spent against each.
struct BudgetsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "budgets", abstract: "List budgets.", subcommands: [List.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every budget, or (with --month) those that apply to a month: budgeted, spent, remaining, over.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var asOf: AsOfOption
        @Option(help: "A month, YYYY-MM.") var month: String?
        @Flag(help: "Print JSON, as GET /v1/budgets answers.") var json = false

        func run() throws {
            let views = try asOf.openViews(global)
            if json {
                do { print(try views.budgetsDocument(month: month).serialized) } catch let error as TallyCore.ValidationError {
                    throw CLIError("invalid --month: \(error.message)")
                }
                return
            }
            guard let month else {
                let budgets = try views.budgets()
                print(
                    Table.render(
                        header: ["CATEGORY", "AMOUNT", "CUR", "FROM", "TO", "ID"],
                        rows: budgets.map { budget in
                            [
                                budget.categoryId ?? "(all)", Currency.format(budget.amount, currency: budget.currency), budget.currency, budget.fromMonth,
                                budget.toMonth ?? "", budget.id,
                            ]
                        }, rightAligned: [1]))
                return
            }
            let statuses: [BudgetStatus]
            do { statuses = try views.budgetStatuses(month: month) } catch let error as TallyCore.ValidationError {
                throw CLIError("invalid --month: \(error.message)")
            }
            print(budgetTable(statuses))
        }
    }
}

/// Budgets against spending, as `budgets list --month` and `summary` print them.
func budgetTable(_ statuses: [BudgetStatus]) -> String {
    Table.render(
        header: ["CATEGORY", "CUR", "BUDGETED", "SPENT", "REMAINING", "OVER"],
        rows: statuses.map { status in
            [
                status.categoryName ?? (status.budget.categoryId == nil ? "(all spending)" : "(deleted category \(status.budget.categoryId ?? ""))"),
                status.budget.currency, Currency.format(status.budget.amount, currency: status.budget.currency),
                money(status.spent, status.budget.currency), money(status.remaining, status.budget.currency), status.isOver ? "over" : "",
            ]
        }, rightAligned: [2, 3, 4])
}
