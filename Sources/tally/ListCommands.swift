import ArgumentParser
import Foundation
import TallyCore
import TallyLedger
import TallyStore

struct ExpensesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "expenses", abstract: "List expenses.", subcommands: [List.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List expenses, newest first.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var asOf: AsOfOption
        @Option(help: "A month, YYYY-MM.") var month: String?
        @Option(help: "From this date (ISO 8601, inclusive).") var from: String?
        @Option(help: "To this date (ISO 8601, exclusive).") var to: String?
        @Option(help: "A category id (its sub-categories included).") var category: String?
        @Option(help: "A tag.") var tag: String?
        @Option(help: "A payee (exactly).") var payee: String?
        @Option(help: "Text the payee, memo or payment method contains.") var text: String?
        @Option(help: "income or expense.") var kind: String?
        @Option(help: "Most rows to show (1 to \(Limits.maxPageSize); default \(Limits.defaultPageSize)).") var limit: String?
        @Option(help: "Continue after a previous page (its nextCursor).") var cursor: String?
        @Flag(help: "One JSON object: items and nextCursor, as GET /v1/expenses answers.") var json = false

        func run() throws {
            let given: [(String, String?)] = [
                ("month", month), ("from", from), ("to", to), ("category", category), ("tag", tag), ("payee", payee),
                ("text", text), ("kind", kind), ("limit", limit), ("cursor", cursor),
            ]
            let query: ExpenseQuery
            do { query = try ExpenseQuery(given.compactMap { name, value in value.map { (name, $0) } }) } catch let error as TallyCore.ValidationError {
                throw CLIError("invalid --\(error.field ?? "option"): \(error.message)")
            }
            let views = try asOf.openViews(global)
            if json {
                print(try views.expensesPageJSON(query).serialized)
                return
            }
            let page = try views.expenses(query)
            let rows = page.rows
            print(
                Table.render(
                    header: ["DATE", "KIND", "AMOUNT", "CUR", "CATEGORY", "PAYEE", "PAYMENT", "MEMO", "TAGS", "ID"],
                    rows: rows.map { row in
                        let category = [row.parentCategoryName, row.categoryName].compactMap { $0 }.joined(separator: " › ")
                        return [
                            String(row.date.prefix(16)), row.kind, (row.kind == "income" ? "+" : "") + Currency.format(row.amount, currency: row.currency),
                            row.currency, category, row.payee ?? "", row.payment ?? "", row.memo ?? "", row.tags.joined(separator: ","), row.id,
                        ]
                    }, rightAligned: [2]))
            if let next = page.nextCursor { print("\nmore: --cursor \(next)") }
        }
    }
}

struct CategoriesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "categories", abstract: "List categories.", subcommands: [List.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Categories as a tree.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var asOf: AsOfOption
        @Flag(help: "Print JSON, as GET /v1/categories answers.") var json = false

        func run() throws {
            let views = try asOf.openViews(global)
            if json {
                print(try views.categoriesDocument().serialized)
                return
            }
            let tree = try views.categoryTree()
            print(
                Table.render(
                    header: ["NAME", "KIND", "ICON", "ID"],
                    rows: tree.map { category, depth in
                        // Indented at most 12 levels, as the web app nests: nothing bounds how deep a chain goes.
                        [String(repeating: "  ", count: min(depth, 12)) + category.name, category.kind, category.icon ?? "", category.id]
                    }))
        }
    }
}

struct TodosCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "todos", abstract: "List to-dos.", subcommands: [List.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "To-dos and challenges with their progress.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var asOf: AsOfOption
        @Flag(help: "Print JSON, as GET /v1/todos answers.") var json = false

        func run() throws {
            let views = try asOf.openViews(global)
            let todos = try views.todos()
            if json {
                print(try views.todosDocument().serialized)
                return
            }
            print(
                Table.render(
                    header: ["TITLE", "DONE", "%", "CHALLENGE", "STREAK", "LONGEST", "RATE %", "START", "END", "ID"],
                    rows: todos.map { todo in
                        let streaks = todo.streaks()
                        return [
                            todo.title, todo.isCompleted ? "yes" : "", String(format: "%.2f", todo.percentage), todo.isChallenge ? "yes" : "",
                            streaks.map { String($0.current) } ?? "", streaks.map { String($0.longest) } ?? "",
                            streaks.map { String(format: "%.2f", $0.completionRate) } ?? "",
                            String(todo.startDate?.prefix(10) ?? ""), String(todo.endDate?.prefix(10) ?? ""), todo.id,
                        ]
                    }, rightAligned: [2]))
        }
    }
}

struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "settings", abstract: "List settings.", subcommands: [List.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Settings with their scope.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var asOf: AsOfOption
        @Flag(help: "Print JSON, as GET /v1/settings answers.") var json = false

        func run() throws {
            let views = try asOf.openViews(global)
            let settings = try views.settings()
            if json {
                print(try views.settingsDocument().serialized)
                return
            }
            print(Table.render(header: ["KEY", "SCOPE", "VALUE"], rows: settings.map { [$0.key, $0.scope, $0.value] }))
        }
    }
}

struct SummaryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "summary", abstract: "A month's income vs expense, by category and payment method; or every month's totals.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var asOf: AsOfOption
    @Option(help: "A month, YYYY-MM (default: this month).") var month: String?
    @Option(help: "A category id: spending by its sub-categories instead of by top-level category.") var category: String?
    @Flag(help: "Totals of every month instead.") var months = false
    @Option(name: .customLong("in"), help: "Also the month's totals in this currency, each expense at the rate of its day (see tally rates).") var into: String?
    @Option(help: "purchase (default): expenses in the month they were made; bill: card purchases in the month their bill is due.") var by: String?
    @Flag(help: "Print JSON, as GET /v1/summary (or /v1/summary/months) answers.") var json = false

    func run() throws {
        let views = try asOf.openViews(global)
        if months {
            let totals = try views.monthlyTotals()
            if json {
                print(try views.monthsDocument().serialized)
            } else {
                print(
                    Table.render(
                        header: ["MONTH", "CUR", "INCOME", "EXPENSE", "NET", "LINES"],
                        rows: totals.map { month, total in
                            [
                                month, total.currency, money(total.income, total.currency),
                                money(total.expense, total.currency), money(total.net, total.currency), String(total.count),
                            ]
                        }, rightAligned: [2, 3, 4, 5]))
            }
            return
        }
        let month = self.month ?? DateTime.nowHere.localMonth
        let summary: MonthSummary
        do {
            let byBill = try LedgerViews.byBill(by)
            if byBill, into != nil { throw CLIError("--by bill and --in cannot be used together: a converted month is by purchase date") }
            summary = try views.summary(month: month, category: category, byBill: byBill)
        } catch let error as TallyCore.ValidationError {
            throw CLIError("invalid --\(error.field ?? "month"): \(error.message)")
        }
        var converted: JSONText?
        if let into {
            do { converted = try views.convertedSummary(month: month, into: into.uppercased()) } catch let error as TallyCore.ValidationError {
                throw CLIError("invalid --in '\(into)': \(error.message)")
            }
        }
        if json {
            print(try views.summaryDocument(month: month, category: category, into: into?.uppercased(), by: by).serialized)
            return
        }
        print("Summary of \(month)\(summary.byBill ? " (card purchases by the month their bill is due)" : "")\n")
        if case .object(let fields)? = converted {
            func value(_ name: String) -> JSONText? { fields.first { $0.0 == name }?.1 }
            let code = into?.uppercased() ?? ""
            func amount(_ name: String) -> String { if case .int(let minor)? = value(name) { Currency.format(minor, currency: code) } else { "(too large)" } }
            print("In \(code): income \(amount("income")), expense \(amount("expense")), net \(amount("net"))")
            if case .array(let missing)? = value("unconverted"), !missing.isEmpty {
                print(
                    "Not converted (no rate on or before their day, or the sum too large to convert): \(missing.count) — "
                        + missing.prefix(10).compactMap { item -> String? in
                            guard case .object(let row) = item else { return nil }
                            let text = row.map { name, value -> String in
                                if case .string(let s) = value { s } else if case .int(let n) = value { String(n) } else { "" }
                            }
                            return text.dropFirst().joined(separator: " ")
                        }.joined(separator: "; "))
            }
            print("")
        }
        print(
            Table.render(
                header: ["CUR", "INCOME", "EXPENSE", "NET", "LINES"],
                rows: summary.totals.map { total in
                    [
                        total.currency, money(total.income, total.currency), money(total.expense, total.currency),
                        money(total.net, total.currency), String(total.count),
                    ]
                }, rightAligned: [1, 2, 3, 4]))
        let sections = [
            ("By category", "CATEGORY", summary.byCategory), ("By payment", "PAYMENT", summary.byPayment),
            ("Top payees", "PAYEE", summary.topPayees),
        ]
        for (title, column, groups) in sections where !groups.isEmpty {
            print("\n\(title)\n")
            print(
                Table.render(
                    header: [column, "KIND", "AMOUNT", "CUR", "LINES"],
                    rows: groups.map { group in
                        [group.label, group.kind, money(group.amount, group.currency), group.currency, String(group.count)]
                    }, rightAligned: [2, 4]))
        }
        if !summary.budgets.isEmpty {
            print("\nBudgets\n")
            print(budgetTable(summary.budgets))
        }
        if !summary.challenges.isEmpty {
            print("\nChallenges\n")
            print(
                Table.render(
                    header: ["CHALLENGE", "STREAK", "LONGEST", "RATE %", "DONE %"],
                    rows: summary.challenges.map { todo in
                        let streaks = todo.streaks()
                        return [
                            todo.title, streaks.map { String($0.current) } ?? "", streaks.map { String($0.longest) } ?? "",
                            streaks.map { String(format: "%.2f", $0.completionRate) } ?? "", String(format: "%.2f", todo.percentage),
                        ]
                    }, rightAligned: [1, 2, 3, 4]))
        }
    }
}

/// A total for a table: the amount, or "too large" when it does not fit in an Int64.
func money(_ sum: AmountSum, _ currency: String) -> String {
    sum.value.map { Currency.format($0, currency: currency) } ?? "too large"
}
