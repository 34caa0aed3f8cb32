import Foundation
import TallyCore
import TallyStore

/// Reports over time (issue 34): spending per category per month, income against spending,
/// and the net worth at each month's end — what the web app draws and the CLI prints, as
/// tables, JSON or CSV.
extension LedgerViews {
    /// The `count` months ending with `to` (`YYYY-MM`), oldest first.
    public static func months(endingWith to: String, count: Int) throws -> [String] {
        guard (1...120).contains(count) else { throw ValidationError(field: "months", "must be 1 to 120") }
        let last = try ExpenseQuery.month(to)
        guard let year = Int(last.prefix(4)), let month = Int(last.suffix(2)) else { throw ValidationError(field: "to", "must be a month, YYYY-MM") }
        let index = year * 12 + (month - 1)
        return try (0..<count).reversed().map { back in
            let (y, m) = ((index - back) / 12, (index - back) % 12 + 1)
            guard (1...9999).contains(y) else { throw ValidationError(field: "to", "reaches before year 1") }
            return String(format: "%04d-%02d", y, m)
        }
    }

    /// The report of the `count` months ending with `to` (default: this month):
    /// `categories` — spending per top-level category (sub-categories counted in their parent,
    /// merged duplicates in the category that stands for them) and currency, one amount per
    /// month; `trend` — each month's income, spending and net per currency; `netWorth` — every
    /// account's balances at each month's end, totalled per currency.
    public func reportDocument(to: String?, count: Int = 12) throws -> JSONText {
        let months = try Self.months(endingWith: to ?? DateTime.nowHere.localMonth, count: count)
        let totals = try store.monthTotals(from: months[0], to: months[months.count - 1])
        let (byID, top) = try topLevelCategories()
        let position = Dictionary(uniqueKeysWithValues: months.enumerated().map { ($1, $0) })
        func amount(_ sum: AmountSum) -> JSONText { sum.value.map { .int($0) } ?? .null }

        struct Key: Hashable { var category: String?, currency: String }
        var spending: [Key: [AmountSum]] = [:]
        var trend: [String: [(income: AmountSum, expense: AmountSum)]] = [:]
        for total in totals {
            guard let index = position[total.month] else { continue }
            var row = trend[total.currency, default: Array(repeating: (AmountSum(), AmountSum()), count: months.count)]
            if total.kind == "income" { row[index].income.add(total.total) } else { row[index].expense.add(total.total) }
            trend[total.currency] = row
            guard total.kind != "income" else { continue }
            spending[Key(category: top(total.categoryId), currency: total.currency), default: Array(repeating: AmountSum(), count: months.count)][index].add(
                total.total)
        }
        // A category whose expenses were all split into others' lines spent nothing of its own.
        let categories: [JSONText] = spending.filter { $0.value.contains { $0 != AmountSum() } }.sorted {
            ($0.key.currency, byID[$0.key.category ?? ""]?.name ?? "\u{10FFFF}") < ($1.key.currency, byID[$1.key.category ?? ""]?.name ?? "\u{10FFFF}")
        }
        .map { key, perMonth in
            .object([
                ("categoryId", key.category.map { .string($0) } ?? .null), ("name", key.category.flatMap { byID[$0]?.name }.map { .string($0) } ?? .null),
                ("currency", .string(key.currency)), ("expense", .array(perMonth.map(amount))),
            ])
        }
        let trendJSON: [JSONText] = trend.sorted { $0.key < $1.key }.map { currency, rows in
            .object([
                ("currency", .string(currency)), ("income", .array(rows.map { amount($0.income) })), ("expense", .array(rows.map { amount($0.expense) })),
                ("net", .array(rows.map { amount($0.income.minus($0.expense)) })),
            ])
        }
        var worth: [JSONText] = []
        for month in months {
            let end = try Self.endOfMonthMillis(month)
            var perCurrency: [String: AmountSum] = [:]
            for account in try store.accountBalances(at: end) { perCurrency[account.currency, default: AmountSum()].add(account.balance) }
            worth.append(
                .object([
                    ("month", .string(month)),
                    ("totals", .array(perCurrency.sorted { $0.key < $1.key }.map { .object([("currency", .string($0.key)), ("balance", amount($0.value))]) })),
                ]))
        }
        return .object([
            ("months", .array(months.map { .string($0) })), ("categories", .array(categories)), ("trend", .array(trendJSON)), ("netWorth", .array(worth)),
        ])
    }

    /// Every category by id, and the top-level category a category counts in (itself at the
    /// top; an unknown id as it is).
    func topLevelCategories() throws -> (byID: [String: CategoryRow], top: (String?) -> String?) {
        let tree = try categoryTree().map(\.category)
        let byID = Dictionary(uniqueKeysWithValues: tree.map { ($0.id, $0) })
        func top(_ id: String?) -> String? {
            var current = id.flatMap { byID[$0] }
            var steps = 0
            while let parent = current?.parentId.flatMap({ byID[$0] }), steps < 64 { (current, steps) = (parent, steps + 1) }
            return current?.id ?? id
        }
        return (byID, top)
    }

    /// The last millisecond of `month` (UTC), for the balances at its end.
    static func endOfMonthMillis(_ month: String) throws -> Int64 {
        guard let year = Int(month.prefix(4)), let number = Int(month.suffix(2)) else { throw ValidationError(field: "month", "must be YYYY-MM") }
        let next = number == 12 ? String(format: "%04d-01-01", year + 1) : String(format: "%04d-%02d-01", year, number + 1)
        guard let start = DateTime(iso8601: next + "T00:00:00Z") else { return Int64.max - 1 }
        return start.epochMillis - 1
    }
}
