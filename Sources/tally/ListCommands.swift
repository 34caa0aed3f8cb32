import ArgumentParser
import Foundation
import TallyCore
import TallyStore

/// Opens the views and brings them up to date with the log before a query.
func openViews(_ global: GlobalOptions) throws -> Projector {
    let projector = try Projector(directory: try global.open())
    try projector.catchUp()
    return projector
}

struct ExpensesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "expenses", abstract: "List expenses.", subcommands: [List.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List expenses, newest first.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "A month, YYYY-MM.") var month: String?
        @Option(help: "From this date (ISO 8601, inclusive).") var from: String?
        @Option(help: "To this date (ISO 8601, exclusive).") var to: String?
        @Option(help: "A category id (its sub-categories included).") var category: String?
        @Option(help: "A tag.") var tag: String?
        @Option(help: "income or expense.") var kind: String?
        @Option(help: "Most rows to show.") var limit = 100
        @Flag(help: "One JSON array.") var json = false

        func run() throws {
            var filter = ExpenseFilter()
            if let month {
                guard month.count == 7, DateTime(iso8601: month + "-01") != nil else { throw CLIError("invalid --month '\(month)': expected YYYY-MM") }
                filter.month = month
            }
            if let from { filter.from = try FlagValue.dateTime(from, flag: "from") }
            if let to { filter.to = try FlagValue.dateTime(to, flag: "to") }
            if let category { filter.categoryId = try FlagValue.id(category).lowercased }
            if let kind {
                guard ["income", "expense"].contains(kind) else { throw CLIError("invalid --kind '\(kind)': income or expense") }
                filter.kind = kind
            }
            guard (1...100_000).contains(limit) else { throw CLIError("invalid --limit \(limit): 1 to 100000") }
            filter.tag = tag
            filter.limit = limit
            let rows = try openViews(global).database.read { try ProjectionQueries.expenses($0, filter) }
            if json {
                print(JSONText.array(rows.map(ViewJSON.expense)).serialized)
                return
            }
            print(Table.render(
                header: ["DATE", "KIND", "AMOUNT", "CUR", "CATEGORY", "PAYMENT", "MEMO", "TAGS", "ID"],
                rows: rows.map { row in
                    let category = [row.parentCategoryName, row.categoryName].compactMap { $0 }.joined(separator: " › ")
                    return [String(row.date.prefix(16)), row.kind, (row.kind == "income" ? "+" : "") + Currency.format(row.amount, currency: row.currency),
                            row.currency, category, row.payment ?? "", row.memo ?? "", row.tags.joined(separator: ","), row.id]
                }, rightAligned: [2]))
        }
    }
}

struct CategoriesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "categories", abstract: "List categories.", subcommands: [List.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Categories as a tree.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "One JSON array.") var json = false

        func run() throws {
            let tree = try openViews(global).database.read { try ProjectionQueries.categoryTree($0) }
            if json {
                print(JSONText.array(tree.map { ViewJSON.category($0.category, depth: $0.depth) }).serialized)
                return
            }
            print(Table.render(header: ["NAME", "KIND", "ICON", "ID"], rows: tree.map { category, depth in
                [String(repeating: "  ", count: depth) + category.name, category.kind, category.icon ?? "", category.id]
            }))
        }
    }
}

struct TodosCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "todos", abstract: "List to-dos.", subcommands: [List.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "To-dos and challenges with their progress.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "One JSON array.") var json = false

        func run() throws {
            let todos = try openViews(global).database.read { try ProjectionQueries.todos($0) }
            if json {
                print(JSONText.array(todos.map(ViewJSON.todo)).serialized)
                return
            }
            print(Table.render(header: ["TITLE", "DONE", "%", "CHALLENGE", "START", "END", "ID"], rows: todos.map { todo in
                [todo.title, todo.isCompleted ? "yes" : "", String(format: "%.2f", todo.percentage), todo.isChallenge ? "yes" : "",
                 String(todo.startDate?.prefix(10) ?? ""), String(todo.endDate?.prefix(10) ?? ""), todo.id]
            }, rightAligned: [2]))
        }
    }
}

struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "settings", abstract: "List settings.", subcommands: [List.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Settings with their scope.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "One JSON array.") var json = false

        func run() throws {
            let settings = try openViews(global).database.read { try ProjectionQueries.settings($0) }
            if json {
                print(JSONText.array(settings.map(ViewJSON.setting)).serialized)
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
    @Option(help: "A month, YYYY-MM (default: this month).") var month: String?
    @Flag(help: "Totals of every month instead.") var months = false
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let views = try openViews(global)
        if months {
            let totals = try views.database.read { try ProjectionQueries.monthlyTotals($0) }
            if json {
                print(ViewJSON.monthlyTotals(totals).serialized)
            } else {
                print(Table.render(header: ["MONTH", "CUR", "INCOME", "EXPENSE", "NET", "LINES"], rows: totals.map { month, total in
                    [month, total.currency, money(total.income, total.currency),
                     money(total.expense, total.currency), money(total.net, total.currency), String(total.count)]
                }, rightAligned: [2, 3, 4, 5]))
            }
            return
        }
        let month = self.month ?? DateTime.now.localMonth
        guard month.count == 7, DateTime(iso8601: month + "-01") != nil else { throw CLIError("invalid --month '\(month)': expected YYYY-MM") }
        let summary = try views.database.read { try ProjectionQueries.summary($0, month: month) }
        if json {
            print(ViewJSON.summary(summary).serialized)
            return
        }
        print("Summary of \(month)\n")
        print(Table.render(header: ["CUR", "INCOME", "EXPENSE", "NET", "LINES"], rows: summary.totals.map { total in
            [total.currency, money(total.income, total.currency), money(total.expense, total.currency),
             money(total.net, total.currency), String(total.count)]
        }, rightAligned: [1, 2, 3, 4]))
        for (title, groups) in [("By category", summary.byCategory), ("By payment", summary.byPayment)] where !groups.isEmpty {
            print("\n\(title)\n")
            print(Table.render(header: ["", "KIND", "AMOUNT", "CUR", "LINES"], rows: groups.map { group in
                [group.label, group.kind, money(group.amount, group.currency), group.currency, String(group.count)]
            }, rightAligned: [2, 4]))
        }
    }
}

/// A total for a table: the amount, or "too large" when it does not fit in an Int64.
func money(_ sum: AmountSum, _ currency: String) -> String {
    sum.value.map { Currency.format($0, currency: currency) } ?? "too large"
}
