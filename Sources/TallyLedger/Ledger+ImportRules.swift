import Foundation
import TallyCore

/// The categorisation rule each row of a statement gets (docs/IMPORT.md, "Rules"), decided
/// before an import writes anything.
struct RuleChoices: Sendable {
    /// The ledger's rules when they were matched.
    let rules: [CategorisationRule]
    /// For each row of the statement, the index of its rule in `rules`, -1 for none (empty:
    /// no rule matched any row, or the ledger has none).
    let ofRow: [Int32]

    static let none = RuleChoices(rules: [], ofRow: [])

    func rule(ofRow row: Int) -> CategorisationRule? {
        guard row < ofRow.count, ofRow[row] >= 0 else { return nil }
        return rules[Int(ofRow[row])]
    }

    /// The categories the rules name.
    var namedCategories: Set<UUID> { Set(rules.compactMap(\.categoryId)) }
}

extension Ledger {
    /// Imports take turns in the process at matching their rows against categorisation rules
    /// (`ruleChoices`): one at a time, on one thread.
    static let matchingTurns = Turns(atOnce: 1, maxWaiting: 8)

    /// The rule each row of `rows` the ledger has never held gets (`CategorisationRule.best`).
    /// A ledger may hold any number of rules, and a wildcard one costs up to a cell's text × its
    /// pattern a row: imports match one at a time in the process, on one thread — 8 more
    /// waiting, beyond them 503 (`LedgerError.matchingBusy`) — until a deadline
    /// (`LedgerLimits.categorisingTime`) that refuses the import. A household sending costly
    /// dry runs in a loop holds one core, not the machine. Rows the ledger holds already (an
    /// import run again, an overlapping statement) are duplicates, and are not matched.
    func ruleChoices(for rows: [StatementRow]) async throws -> RuleChoices {
        let views = views
        // A ledger with no rules (most) does not wait for the process's turn.
        let hasRules = try await blocking { () -> Bool in try !views.store.liveEntities(.rule).isEmpty }
        guard !rows.isEmpty, hasRules else { return .none }
        let limit = limits.categorisingTime
        return try await Self.matchingTurns.run(refusal: LedgerError.matchingBusy(imports: Self.matchingTurns.maxWaiting + 1)) {
            // The process's turn limits this to one thread: not the ledger's share, which the
            // same household's reads may hold while every other household's imports wait here.
            try await BlockingThreads.run {
                // Read again in the turn: the wait for it may have been long.
                let rules = try views.store.liveEntities(.rule).compactMap(CategorisationRule.init)
                guard !rules.isEmpty else { return .none }
                let ids = InParallel.map(rows) { EntityID.uuid(Self.expenseID(importKey: $0.importKey)) }
                let held = try views.store.withLookup { try $0.held(among: ids) }
                let deadline = ContinuousClock.now + limit
                var ofRow = [Int32](repeating: -1, count: rows.count)
                let index = Dictionary(rules.enumerated().map { ($0.element.id, Int32($0.offset)) }, uniquingKeysWith: { first, _ in first })
                for (number, row) in rows.enumerated() where !held.contains(ids[number]) {
                    do {
                        if let rule = try CategorisationRule.best(for: [row.payee, row.memo].compactMap { $0 }, among: rules, until: deadline) {
                            ofRow[number] = index[rule.id] ?? -1
                        }
                    } catch {
                        throw ValidationError(
                            field: "file",
                            "matching the rows against the ledger's \(rules.count) categorisation rules took longer than \(limit) (stopped at \(row.sheet.isEmpty ? "" : "sheet '\(row.sheet)' ")row \(row.row)); import a smaller file, or make the rules fewer or simpler"
                        )
                    }
                }
                return RuleChoices(rules: rules, ofRow: ofRow)
            }
        }
    }
}
