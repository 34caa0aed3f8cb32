/// A categorisation rule (docs/IMPORT.md, "Rules"): text a statement row's payee or memo
/// contains (or matches, as a `*`/`?` wildcard pattern), and the category and tags such a row
/// gets on import. Matching ignores case and runs in time linear in the text (no regular
/// expressions: a rule may come from a peer, and backtracking could be made to take forever).
/// A wildcard rule still costs up to text × pattern (4 KiB × 64 characters) a row, and a ledger
/// may hold any number of rules: an import matches its rows until a deadline (`best(for:among:until:)`).
public struct CategorisationRule: Sendable, Equatable {
    public private(set) var id: String
    public private(set) var pattern: String
    public private(set) var isWildcard: Bool
    /// The pattern's characters, for wildcard matching (made once, not at every row).
    private var patternCharacters: [Character]
    public var categoryId: UUID?
    public var tags: [String]

    /// The rule of a live `rule` entity; nil if its pattern has not arrived.
    public init?(_ entity: LedgerState.Entity) {
        guard case .string(let pattern)? = entity.value(.pattern), !pattern.isEmpty else { return nil }
        id = entity.id.description
        self.pattern = pattern.lowercased()
        if case .string(let match)? = entity.value(.match) { isWildcard = match == "matches" } else { isWildcard = false }
        patternCharacters = isWildcard ? Array(self.pattern) : []
        if case .uuid(let category)? = entity.value(.categoryId) { categoryId = category } else { categoryId = nil }
        if case .strings(let tags)? = entity.value(.tags) { self.tags = tags } else { tags = [] }
    }

    /// Whether `text` contains the pattern (or, a wildcard rule, matches it whole).
    public func matches(_ text: String) -> Bool { matches(RowText(text, forWildcards: isWildcard)) }

    private func matches(_ text: RowText) -> Bool {
        isWildcard ? Self.wildcard(patternCharacters, text.characters) : text.lowered.contains(pattern)
    }

    /// A row's text made ready for every rule at once: lowercased, and as characters when a
    /// wildcard rule will read it.
    private struct RowText {
        let lowered: String
        let characters: [Character]
        init(_ text: String, forWildcards: Bool) {
            lowered = text.lowercased()
            characters = forWildcards ? Array(lowered) : []
        }
    }

    /// Matching a row took past the import's deadline.
    public struct OutOfTime: Error {}

    /// The rule for a row with `texts` (payee, memo): among those that match one of them, the
    /// one with the longest pattern (the most specific), then the smallest id — the same rule on
    /// every replica holding the same rules. Throws `OutOfTime` once `deadline` has passed
    /// (asked every 32 rules).
    public static func best(
        for texts: [String], among rules: [CategorisationRule], until deadline: ContinuousClock.Instant? = nil
    ) throws(OutOfTime) -> CategorisationRule? {
        guard !rules.isEmpty else { return nil }
        let wildcards = rules.contains(where: \.isWildcard)
        let texts = texts.map { RowText($0, forWildcards: wildcards) }
        var best: CategorisationRule?
        for (number, rule) in rules.enumerated() {
            if number % 32 == 0, let deadline, ContinuousClock.now > deadline { throw OutOfTime() }
            guard texts.contains(where: rule.matches) else { continue }
            if let chosen = best, (chosen.pattern.count, rule.id) >= (rule.pattern.count, chosen.id) { continue }
            best = rule
        }
        return best
    }

    /// `*` any run of characters, `?` one character; greedy with one backtrack point, so
    /// linear-times-pattern at worst.
    static func wildcard(_ pattern: [Character], _ text: [Character]) -> Bool {
        var (p, t) = (0, 0)
        var star: Int?, resume = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == "*" {
                star = p; resume = t; p += 1
            } else if p < pattern.count, pattern[p] == "?" || pattern[p] == text[t] {
                p += 1; t += 1
            } else if let star {
                p = star + 1; resume += 1; t = resume
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}

import Foundation
