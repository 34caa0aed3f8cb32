/// A categorisation rule (docs/IMPORT.md, "Rules"): text a statement row's payee or memo
/// contains (or matches, as a `*`/`?` wildcard pattern), and the category and tags such a row
/// gets on import. Matching ignores case and runs in time linear in the text (no regular
/// expressions: a rule may come from a peer, and backtracking could be made to take forever).
public struct CategorisationRule: Sendable, Equatable {
    public var id: String
    public var pattern: String
    public var isWildcard: Bool
    public var categoryId: UUID?
    public var tags: [String]

    /// The rule of a live `rule` entity; nil if its pattern has not arrived.
    public init?(_ entity: LedgerState.Entity) {
        guard case .string(let pattern)? = entity.value(.pattern), !pattern.isEmpty else { return nil }
        id = entity.id.description
        self.pattern = pattern.lowercased()
        if case .string(let match)? = entity.value(.match) { isWildcard = match == "matches" } else { isWildcard = false }
        if case .uuid(let category)? = entity.value(.categoryId) { categoryId = category } else { categoryId = nil }
        if case .strings(let tags)? = entity.value(.tags) { self.tags = tags } else { tags = [] }
    }

    /// Whether `text` contains the pattern (or, a wildcard rule, matches it whole).
    public func matches(_ text: String) -> Bool {
        let text = text.lowercased()
        return isWildcard ? Self.wildcard(Array(pattern), Array(text)) : text.contains(pattern)
    }

    /// The rule for a row with `texts` (payee, memo): among those that match one of them, the
    /// one with the longest pattern (the most specific), then the smallest id — the same rule on
    /// every replica holding the same rules.
    public static func best(for texts: [String], among rules: [CategorisationRule]) -> CategorisationRule? {
        rules.filter { rule in texts.contains(where: rule.matches) }
            .min { ($0.pattern.count, $1.id) > ($1.pattern.count, $0.id) }
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
