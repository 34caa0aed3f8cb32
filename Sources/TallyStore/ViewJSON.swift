import TallyCore

/// View rows as JSON objects (CLI `--json` and the HTTP API share these shapes) with the field names of DESIGN.md §2 (plus resolved names).
public enum ViewJSON {
    /// `isHeld` tells whether this replica holds an attachment's blob; those it does not (sent
    /// by a peer, the blob not arrived yet) are listed again under `missingAttachments`.
    public static func expense(_ row: ExpenseRow, isHeld: (String) -> Bool = { _ in true }) -> JSONText {
        .object([
            ("id", .string(row.id)), ("kind", .string(row.kind)), ("amount", .int(row.amount)), ("currency", .string(row.currency)),
            ("date", .string(row.date)), ("categoryId", optional(row.categoryId)), ("categoryName", optional(row.categoryName)),
            ("parentCategoryName", optional(row.parentCategoryName)), ("payee", optional(row.payee)), ("payment", optional(row.payment)),
            ("memo", optional(row.memo)),
            ("tags", .array(row.tags.map(JSONText.string))), ("repeat", .string(row.repeat)),
            ("attachments", .array(row.attachments.map(JSONText.string))),
            ("missingAttachments", .array(row.attachments.filter { !isHeld($0) }.map(JSONText.string))),
        ])
    }

    public static func category(_ row: CategoryRow, depth: Int) -> JSONText {
        .object([
            ("id", .string(row.id)), ("name", .string(row.name)), ("parentId", optional(row.parentId)),
            ("icon", optional(row.icon)), ("kind", .string(row.kind)), ("depth", .int(Int64(depth))),
        ])
    }

    /// A to-do; a challenge's with its streaks at `now`.
    public static func todo(_ row: TodoRow, isHeld: (String) -> Bool = { _ in true }, now: DateTime = .nowHere) -> JSONText {
        .object([
            ("id", .string(row.id)), ("title", .string(row.title)), ("memo", optional(row.memo)), ("startDate", optional(row.startDate)),
            ("endDate", optional(row.endDate)), ("checks", .array(row.checks.map(JSONText.bool))), ("isChallenge", .bool(row.isChallenge)),
            ("isCompleted", .bool(row.isCompleted)), ("attachments", .array(row.attachments.map(JSONText.string))),
            ("missingAttachments", .array(row.attachments.filter { !isHeld($0) }.map(JSONText.string))),
            ("percentage", .double(row.percentage)), ("streaks", streaks(row.streaks(now: now))),
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

    /// A budget as written.
    public static func budget(_ row: BudgetRow) -> JSONText {
        .object(
            [
                ("id", .string(row.id)), ("categoryId", optional(row.categoryId)), ("amount", .int(row.amount)), ("currency", .string(row.currency)),
                ("fromMonth", .string(row.fromMonth)), ("toMonth", optional(row.toMonth)),
            ]
                + (row.categoryRef != row.categoryId ? [("writtenForCategoryId", optional(row.categoryRef))] : []))
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
