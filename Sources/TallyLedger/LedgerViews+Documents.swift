import TallyCore
import TallyStore

/// The JSON documents of the lists and summaries, written once for both front ends: what
/// `GET /v1/…` answers is what `tally … --json` prints, byte for byte (issue 30; a test walks
/// every one). A list is `{"items": […]}` and whatever belongs beside its items.
extension LedgerViews {
    /// The category tree (`items`, each with its depth) and the duplicates merged into it (`merged`).
    public func categoriesDocument() throws -> JSONText {
        let (tree, merges) = (try categoryTree(), try categoryMerges())
        return .object([
            ("items", .array(tree.map { ViewJSON.category($0.category, depth: $0.depth) })),
            ("merged", .array(merges.map(ViewJSON.categoryMerge))),
        ])
    }

    /// Every to-do, with its derived percentage and streaks.
    public func todosDocument() throws -> JSONText {
        .object([("items", try store.todosJSON(isHeld: isAttachmentHeld))])
    }

    /// Every setting, with its scope.
    public func settingsDocument() throws -> JSONText {
        .object([("items", .array(try settings().map(ViewJSON.setting)))])
    }

    /// Every budget as written; with a `month`, those that apply to it, with what was spent.
    public func budgetsDocument(month: String?) throws -> JSONText {
        guard let month else { return .object([("items", try store.budgetsJSON())]) }
        return .object([("month", .string(month)), ("items", .array(try budgetStatuses(month: month).map(ViewJSON.budgetStatus)))])
    }

    /// Every exchange rate.
    public func ratesDocument() throws -> JSONText { .object([("items", .array(try rates()))]) }

    /// Every categorisation rule.
    public func rulesDocument() throws -> JSONText { .object([("items", .array(try rules()))]) }

    /// Every recurring rule, with its next occurrence days.
    public func recurringDocument() throws -> JSONText {
        .object([("items", .array(try recurringRuleEntities().map { try LedgerViews.ruleJSON($0) }))])
    }

    /// A month's summary (of one category and its sub-categories, if given), and with `into`
    /// a currency, the month converted into it (`in`).
    /// `by`: `purchase` (default) or `bill` (card purchases in the month their bill is due).
    public func summaryDocument(month: String, category: String?, into: String?, by: String? = nil) throws -> JSONText {
        let byBill = try Self.byBill(by)
        if byBill, into != nil { throw ValidationError(field: "in", "a converted month is by purchase date: leave out by=bill") }
        let summary = ViewJSON.summary(try self.summary(month: month, category: category, byBill: byBill))
        guard let into, case .object(var fields) = summary else { return summary }
        fields.append(("in", try convertedSummary(month: month, into: into)))
        return .object(fields)
    }

    /// `by` as a flag: `purchase` (or none) false, `bill` true.
    public static func byBill(_ by: String?) throws -> Bool {
        switch by {
        case nil, "purchase"?: return false
        case "bill"?: return true
        default: throw ValidationError(field: "by", "must be purchase or bill")
        }
    }

    /// Every month's totals.
    public func monthsDocument() throws -> JSONText { .object([("items", ViewJSON.monthlyTotals(try monthlyTotals()))]) }

    /// The conflict journal (of one entity, if given).
    public func conflictsDocument(entity: String?) throws -> JSONText {
        .object([("items", .array(try conflicts(entity: entity).map(ViewJSON.conflict)))])
    }
}

extension LedgerViews {
    /// Every import's record.
    public func imports() throws -> [LedgerState.Entity] { try store.liveEntities(.importBatch) }

    /// Every import's record: its id, file name, format, digest and how many expenses it made.
    public func importsDocument() throws -> JSONText { .object([("items", .array(try imports().map(Ledger.importJSON)))]) }
}
