import Foundation
import TallyCore
import TallyStore

/// The year in review (issue 34, docs/HOUSEHOLD.md "The year in review"): a year's income and
/// spending against the year before, its months, the categories it went to, its largest
/// expenses, and the net worth at its start and end — per currency, never converted.
extension LedgerViews {
    /// How many categories and largest expenses a year in review names.
    static let yearTopCount = 5

    /// `{year, currencies: [{currency, income, expense, net, count, previous: {income, expense},
    /// months: [12 × expense], busiestMonth: {month, expense}, topCategories: [{categoryId, name,
    /// expense, share}], largest: [{id, date, payee, amount, categoryId}]}], netWorth: {start,
    /// end: [{currency, balance}]}}`. `year`: `YYYY` (default this year).
    public func yearInReviewDocument(year text: String?) throws -> JSONText {
        let yearText = text ?? String(DateTime.nowHere.localMonth.prefix(4))
        guard yearText.utf8.count == 4, yearText.utf8.allSatisfy({ (48...57).contains($0) }), let year = Int(yearText), year >= 2 else {
            throw ValidationError(field: "year", "must be a year, YYYY (0002 to 9999)")
        }
        let months = try Self.months(endingWith: "\(yearText)-12", count: 24)
        let (thisYear, lastYear) = (Array(months[12...]), Array(months[..<12]))
        let totals = try store.monthTotals(from: months[0], to: months[23])
        let (byID, top) = try topLevelCategories()
        func amount(_ sum: AmountSum) -> JSONText { sum.value.map { .int($0) } ?? .null }

        struct Year { var income = AmountSum(), expense = AmountSum(), count = 0, previousIncome = AmountSum(), previousExpense = AmountSum() }
        var years: [String: Year] = [:]
        var perMonth: [String: [AmountSum]] = [:]
        var perCategory: [String: [String?: AmountSum]] = [:]
        let position = Dictionary(uniqueKeysWithValues: thisYear.enumerated().map { ($1, $0) })
        for total in totals {
            var entry = years[total.currency, default: Year()]
            guard let index = position[total.month] else {
                if total.kind == "income" { entry.previousIncome.add(total.total) } else { entry.previousExpense.add(total.total) }
                years[total.currency] = entry
                continue
            }
            entry.count += total.count
            if total.kind == "income" {
                entry.income.add(total.total)
            } else {
                entry.expense.add(total.total)
                perMonth[total.currency, default: Array(repeating: AmountSum(), count: 12)][index].add(total.total)
                perCategory[total.currency, default: [:]][top(total.categoryId), default: AmountSum()].add(total.total)
            }
            years[total.currency] = entry
        }
        let largest = try store.largestExpenses(from: thisYear[0], to: thisYear[11], limit: Self.yearTopCount)
        let currencies: [JSONText] = years.filter { $0.value.count > 0 }.sorted { $0.key < $1.key }.map { currency, entry in
            let months = perMonth[currency] ?? Array(repeating: AmountSum(), count: 12)
            // The month with the most spending (the earliest of equals); none when nothing was spent.
            let busiest = months.indices.filter { months[$0] != AmountSum() }.max { (months[$0].value ?? .max, $1) < (months[$1].value ?? .max, $0) }
            let categories = (perCategory[currency] ?? [:]).filter { $0.value != AmountSum() }.sorted {
                ($0.value.value ?? .max, $1.key ?? "") > ($1.value.value ?? .max, $0.key ?? "")
            }
            func share(_ part: AmountSum) -> JSONText {
                guard let part = part.value, let whole = entry.expense.value, whole > 0 else { return .null }
                return .double((Double(part) / Double(whole) * 1000).rounded() / 10)
            }
            var fields: [(String, JSONText)] = [("currency", .string(currency)), ("income", amount(entry.income)), ("expense", amount(entry.expense))]
            fields += [("net", amount(entry.income.minus(entry.expense))), ("count", .int(Int64(entry.count)))]
            fields.append(("previous", .object([("income", amount(entry.previousIncome)), ("expense", amount(entry.previousExpense))])))
            fields.append(("months", .array(months.map(amount))))
            fields.append(
                ("busiestMonth", busiest.map { .object([("month", .string(thisYear[$0])), ("expense", amount(months[$0]))]) } ?? .null))
            fields.append(
                (
                    "topCategories",
                    .array(
                        categories.prefix(Self.yearTopCount).map { id, sum in
                            .object([
                                ("categoryId", id.map { .string($0) } ?? .null), ("name", id.flatMap { byID[$0]?.name }.map { .string($0) } ?? .null),
                                ("expense", amount(sum)), ("share", share(sum)),
                            ])
                        })
                ))
            fields.append(
                (
                    "largest",
                    .array(
                        largest.filter { $0.currency == currency }.map { expense in
                            .object([
                                ("id", .string(expense.id)), ("date", .string(expense.date)), ("payee", expense.payee.map { .string($0) } ?? .null),
                                ("amount", .int(expense.amount)), ("categoryId", expense.categoryId.map { .string($0) } ?? .null),
                            ])
                        })
                ))
            return .object(fields)
        }
        func worth(at month: String) throws -> JSONText {
            var perCurrency: [String: AmountSum] = [:]
            for account in try store.accountBalances(at: try Self.endOfMonthMillis(month)) {
                perCurrency[account.currency, default: AmountSum()].add(account.balance)
            }
            return .array(perCurrency.sorted { $0.key < $1.key }.map { .object([("currency", .string($0.key)), ("balance", amount($0.value))]) })
        }
        return .object([
            ("year", .string(yearText)), ("currencies", .array(currencies)),
            ("netWorth", .object([("start", try worth(at: lastYear[11])), ("end", try worth(at: thisYear[11]))])),
        ])
    }
}
