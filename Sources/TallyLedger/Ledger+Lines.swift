import Foundation
import TallyCore
import TallyStore

/// Split receipts (issue 34, docs/HOUSEHOLD.md "Split receipts"): one payment shared out
/// among lines of their own categories.
///
/// Lines are entities of their own (type `line`), so that two replicas editing two lines of
/// one receipt both keep their edit. A local split is written whole (`setLines`), checked to
/// add up to its payment; merged edits may leave one that does not, which is shown as
/// needing attention and never changed by itself (docs/MERGE.md).
extension Ledger {
    /// One line of a split as asked for: an existing line's id keeps that line (changed where
    /// it differs), none makes a new one.
    public struct SplitLine: Sendable, Equatable {
        public var id: UUID?
        public var categoryId: UUID?
        public var amount: Int64
        public var memo: String?

        public init(id: UUID? = nil, categoryId: UUID?, amount: Int64, memo: String? = nil) {
            (self.id, self.categoryId, self.amount, self.memo) = (id, categoryId, amount, memo)
        }

        /// The lines of a body `{"lines": [{"id"?, "categoryId"?, "amount", "memo"?}, …]}`, each
        /// field checked as a line's field is (an expenseId is the path's, never the body's).
        public static func lines(fromJSON body: JSONValue) throws -> [SplitLine] {
            guard case .object(let members) = body, members.count == 1, members[0].0 == "lines", case .array(let items) = members[0].1 else {
                throw ValidationError(field: "lines", "the body must be {\"lines\": [{\"categoryId\", \"amount\", \"memo\"}, …]}", kind: .malformed)
            }
            guard items.count <= Limits.maxLinesPerExpense else { throw ValidationError(field: "lines", "at most \(Limits.maxLinesPerExpense) lines") }
            return try items.enumerated().map { index, item in
                let (id, properties) = try EntitySpec.line.decode(item)
                if properties[.expenseId] != nil { throw ValidationError(field: "lines[\(index)].expenseId", "a line's expense is the one in the path") }
                guard case .int(let amount)? = properties[.amount] else { throw ValidationError(field: "lines[\(index)].amount", "required") }
                var category: UUID?
                if case .uuid(let uuid)? = properties[.categoryId] { category = uuid }
                var memo: String?
                if case .string(let text)? = properties[.memo] { memo = text }
                return SplitLine(id: id, categoryId: category, amount: amount, memo: memo)
            }
        }
    }

    /// Replaces the lines of expense `expense` with `lines` as one durable batch — lines kept,
    /// changed, added and deleted — and returns the receipt (`LedgerViews.splitReceiptDocument`).
    /// The lines must add up to the expense's amount (none: the expense is no longer split);
    /// anything refused writes nothing.
    public func setLines(of expense: UUID, _ lines: [SplitLine], actor: String) async throws -> JSONText {
        guard lines.count <= Limits.maxLinesPerExpense else {
            throw ValidationError(field: "lines", "at most \(Limits.maxLinesPerExpense) lines")
        }
        // One split of an expense at a time: two at once would each keep the lines they read
        // and add their own (a double tap on Save would leave lines that add up to twice it).
        guard splitsUnderWay.withLock({ $0.insert(expense).inserted }) else {
            throw ValidationError(field: "id", "a split of this expense is being written: try again in a moment", kind: .conflictsWithState)
        }
        defer { _ = splitsUnderWay.withLock { $0.remove(expense) } }
        let existing = try views.store.lineCategories(expenseID: expense.lowercased)
        try await blocking { [session] in
            _ = try session.writeAll(actor: actor) { lookup in try Self.lineDrafts(of: expense, lines, existing: existing, actor: actor, lookup) }
        }
        return try views.splitReceiptDocument(expense: expense)
    }

    /// A line written on its own (`POST /v1/lines`) finds room on its expense: at most
    /// `Limits.maxLinesPerExpense`, as a whole split.
    func checkLineRoom(_ properties: PropertyMap) throws {
        guard case .uuid(let expense)? = properties[.expenseId] else { return }
        if try views.store.lineCategories(expenseID: expense.lowercased).count >= Limits.maxLinesPerExpense {
            throw ValidationError(field: "expenseId", "an expense has at most \(Limits.maxLinesPerExpense) lines", kind: .conflictsWithState)
        }
    }

    /// The events that turn an expense's `existing` lines (id → the category the views show
    /// for it, merged duplicates resolved) into `lines`.
    private static func lineDrafts(
        of expense: UUID, _ lines: [SplitLine], existing: [String: String?], actor: String, _ lookup: some LedgerLookup
    ) throws -> [EventDraft] {
        guard let payment = try lookup.live(.uuid(expense)), payment.type == .expense else {
            throw ValidationError(field: "id", "no expense with id \(expense.lowercased)", kind: .notFound)
        }
        guard case .int(let amount)? = payment.values[.amount] else { throw ValidationError(field: "amount", "the expense has no amount") }
        var total: Int64 = 0
        for (index, line) in lines.enumerated() {
            guard line.amount > 0 else { throw ValidationError(field: "lines[\(index)].amount", "must be more than 0") }
            let (sum, overflow) = total.addingReportingOverflow(line.amount)
            guard !overflow else { throw ValidationError(field: "lines", "the lines add up to more than the expense") }
            total = sum
        }
        if !lines.isEmpty, total != amount {
            throw ValidationError(field: "lines", "the lines add up to \(total), not the expense's \(amount): they must add up to it")
        }
        var kept = Set(lines.compactMap(\.id))
        guard kept.count == lines.compactMap(\.id).count else { throw ValidationError(field: "lines", "a line is named twice") }
        /// Whether `category` (as given) is the category `id` shows: the one written, or the one
        /// that stands for it since duplicates merged.
        func shows(_ id: UUID, _ category: UUID?, _ entity: LedgerState.Entity) -> Bool {
            (entity.values[.categoryId] ?? .null) == (category.map { .uuid($0) } ?? .null) || existing[id.lowercased] == .some(category?.lowercased)
        }
        func memo(_ text: String?) -> PropertyValue {
            guard let text else { return .null }
            return (try? EntitySpec.line.field(.memo)?.normalize(.string(text))) ?? .string(text)
        }
        // A line given without an id takes the place of an existing line not named, of the same
        // category and memo: a re-split that keeps a line (from a form or the CLI) keeps its id,
        // so that another replica's edit of it is merged, not lost with a deleted line.
        var unnamed: [(id: UUID, entity: LedgerState.Entity)] = []
        for id in existing.keys.sorted().compactMap(UUID.init(uuidString:)) where !kept.contains(id) {
            if let entity = try lookup.live(.uuid(id)), entity.type == .line { unnamed.append((id, entity)) }
        }
        let lines = lines.map { line in
            guard line.id == nil else { return line }
            guard
                let match = unnamed.firstIndex(where: { shows($0.id, line.categoryId, $0.entity) && ($0.entity.values[.memo] ?? .null) == memo(line.memo) })
            else { return line }
            let id = unnamed.remove(at: match).id
            kept.insert(id)
            return SplitLine(id: id, categoryId: line.categoryId, amount: line.amount, memo: line.memo)
        }
        var drafts: [EventDraft] = []
        for line in lines {
            var properties: PropertyMap = [
                .categoryId: line.categoryId.map { .uuid($0) } ?? .null, .amount: .int(line.amount), .memo: line.memo.map { .string($0) } ?? .null,
            ]
            guard let id = line.id else {
                properties[.expenseId] = .uuid(expense)
                drafts.append(EventDraft(entityType: .line, entityID: .uuid(.random()), operation: .create, properties: properties, actor: actor))
                continue
            }
            guard let current = try lookup.live(.uuid(id)), current.type == .line, current.values[.expenseId] == .uuid(expense) else {
                throw ValidationError(field: "lines", "no line \(id.lowercased) of this expense", kind: .conflictsWithState)
            }
            // Only what differs is written: an untouched line keeps its stamps (no conflict with
            // another replica's edit of it), and a category given as the one that now stands for
            // the line's (merged duplicates) is no change.
            var changed = PropertyMap()
            for (name, value) in properties where (current.values[name] ?? .null) != value { changed[name] = value }
            if shows(id, line.categoryId, current) { changed[.categoryId] = nil }
            if changed[.memo] != nil, memo(line.memo) == (current.values[.memo] ?? .null) { changed[.memo] = nil }
            if !changed.isEmpty {
                drafts.append(EventDraft(entityType: .line, entityID: .uuid(id), operation: .update, properties: changed, actor: actor))
            }
        }
        for id in existing.keys.sorted().compactMap(UUID.init(uuidString:)) where !kept.contains(id) {
            if try lookup.live(.uuid(id)) != nil { drafts.append(EventDraft(entityType: .line, entityID: .uuid(id), operation: .delete, actor: actor)) }
        }
        return drafts
    }
}

extension LedgerViews {
    /// Every split receipt (those needing attention first) and the lines whose expense these
    /// views do not hold: `{receipts: [...], unattached: [...]}`.
    public func splitReceiptsDocument() throws -> JSONText { try store.splitReceiptsJSON() ?? .null }

    /// One expense as a receipt: `{expenseId, amount, currency, …, assigned, unassigned,
    /// needsAttention, lines}` (no lines: not split).
    public func splitReceiptDocument(expense: UUID) throws -> JSONText {
        guard let receipt = try store.splitReceiptsJSON(expenseID: expense.lowercased) else {
            throw ValidationError(field: "id", "no expense with id \(expense.lowercased)", kind: .notFound)
        }
        return receipt
    }
}
