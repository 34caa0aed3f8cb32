import TallyCore

/// Reports and the rows that are not entities with a view table, as JSON objects (the CLI's
/// `--json` and the API share these shapes). Expenses, to-dos and budgets are written by
/// `ViewRecordJSON` from their `ViewTable`.
public enum ViewJSON {
    public static func category(_ row: CategoryRow, depth: Int) -> JSONText {
        .object([
            ("id", .string(row.id)), ("name", .string(row.name)), ("parentId", optional(row.parentId)),
            ("icon", optional(row.icon)), ("kind", .string(row.kind)), ("depth", .int(Int64(depth))),
        ])
    }

    /// `{current, longest, completionRate}`, or null.
    public static func streaks(_ streaks: Todo.Streaks?) -> JSONText {
        guard let streaks else { return .null }
        return .object([
            ("current", .int(Int64(streaks.current))), ("longest", .int(Int64(streaks.longest))),
            ("completionRate", .double(streaks.completionRate)),
        ])
    }

    /// A category merged into another: `id` is the duplicate, `mergedInto` the category that stands for it.
    public static func categoryMerge(_ merge: CategoryMergeRow) -> JSONText {
        .object([("id", .string(merge.loserID)), ("mergedInto", .string(merge.winnerID)), ("reason", .string(merge.reason))])
    }

    /// A budget as it applies to a month: budgeted, spent, remaining, over.
    public static func budgetStatus(_ status: BudgetStatus) -> JSONText {
        .object(
            [
                ("budgetId", .string(status.budget.id)), ("categoryId", optional(status.budget.categoryId)),
                ("categoryName", optional(status.categoryName)), ("currency", .string(status.budget.currency)),
                ("budgeted", .int(status.budget.amount)), ("spent", amount(status.spent)), ("remaining", amount(status.remaining)),
                ("over", .bool(status.isOver)), ("fromMonth", .string(status.budget.fromMonth)), ("toMonth", optional(status.budget.toMonth)),
            ]
                + overflow([status.spent, status.remaining]))
    }

    public static func setting(_ row: SettingRow) -> JSONText {
        .object([("key", .string(row.key)), ("value", .raw(row.value)), ("scope", .string(row.scope))])
    }

    public static func summary(_ summary: MonthSummary) -> JSONText {
        func group(_ g: MonthSummary.Group, keyName: String) -> JSONText {
            .object(
                [
                    (keyName, optional(g.key)), ("label", .string(g.label)), ("kind", .string(g.kind)),
                    ("currency", .string(g.currency)), ("amount", amount(g.amount)), ("count", .int(Int64(g.count))),
                ]
                    + overflow([g.amount]))
        }
        return .object([
            ("month", .string(summary.month)),
            ("by", .string(summary.byBill ? "bill" : "purchase")),
            ("totals", .array(summary.totals.map(total))),
            ("byCategory", .array(summary.byCategory.map { group($0, keyName: "categoryId") })),
            ("byPayment", .array(summary.byPayment.map { group($0, keyName: "payment") })),
            ("topPayees", .array(summary.topPayees.map { group($0, keyName: "payee") })),
            ("budgets", .array(summary.budgets.map(budgetStatus))),
            (
                "challenges",
                .array(
                    summary.challenges.map { row in
                        .object([
                            ("id", .string(row.id)), ("title", .string(row.title)), ("percentage", .double(row.percentage)),
                            ("streaks", streaks(row.streaks())),
                        ])
                    })
            ),
        ])
    }

    /// One currency's totals; `"overflow": true` (and null amounts) where a total does not fit in an Int64.
    public static func total(_ total: MonthSummary.Total) -> JSONText {
        .object(
            [
                ("currency", .string(total.currency)), ("income", amount(total.income)), ("expense", amount(total.expense)),
                ("net", amount(total.net)), ("count", .int(Int64(total.count))),
            ] + overflow([total.income, total.expense, total.net]))
    }

    /// Every month's totals.
    public static func monthlyTotals(_ totals: [(month: String, total: MonthSummary.Total)]) -> JSONText {
        .array(
            totals.map { month, total in
                guard case .object(let fields) = ViewJSON.total(total) else { return .null }
                return .object([("month", .string(month))] + fields)
            })
    }

    static func amount(_ sum: AmountSum) -> JSONText { sum.value.map(JSONText.int) ?? .null }

    static func overflow(_ sums: [AmountSum]) -> [(String, JSONText)] {
        sums.contains(where: \.overflowed) ? [("overflow", .bool(true))] : []
    }

    public static func conflict(_ c: ConflictRow) -> JSONText {
        .object([
            ("entityId", .string(c.entityID)), ("entityType", .string(c.entityType)), ("property", .string(c.property)),
            ("losingValue", .raw(c.losingValue)), ("loserHlc", .string(c.loserHLC)), ("loserOrigin", .string(c.loserOrigin)),
            ("winningValue", .raw(c.winningValue)), ("winnerHlc", .string(c.winnerHLC)), ("winnerOrigin", .string(c.winnerOrigin)),
        ])
    }

    public static func optional(_ text: String?) -> JSONText { text.map(JSONText.string) ?? .null }
}
