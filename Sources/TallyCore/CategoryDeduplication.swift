import Foundation

/// Categories that share a (normalized name, parent) key are one category: typically the same
/// defaults created on two replicas before they first met. This decides, from the live
/// categories alone, which one stands for each — the same answer on every replica whatever
/// order events arrived in, because it depends on nothing but the current states.
///
/// Rules (docs/MERGE.md): the key is the normalized name and the *canonical* parent, so when
/// two parents merge, their children can become duplicates in turn (cascade); the winner of a
/// key is the smallest id (UUID byte order), so a "smaller" duplicate arriving later takes
/// over; renames are just new keys, creating or removing collisions.
public enum CategoryDeduplication {
    /// One live category as the rules see it.
    public struct Category: Sendable, Equatable {
        public var id: String
        public var name: String
        public var parentId: String?

        public init(id: String, name: String, parentId: String?) {
            (self.id, self.name, self.parentId) = (id, name, parentId)
        }
    }

    /// Why a category stands for another.
    public struct Merge: Sendable, Equatable {
        public var loser: String
        public var winner: String
        /// The shared key, as people read it: `name` or `name under <parent id>`.
        public var reason: String
    }

    /// Trimmed, inner whitespace collapsed, Unicode-normalized (NFKC) and case-folded:
    /// "  Food ", "food" and "ＦＯＯＤ" are the same name.
    public static func normalizedName(_ name: String) -> String {
        name.precomposedStringWithCompatibilityMapping
            .folding(options: [.caseInsensitive, .widthInsensitive], locale: nil)
            .split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The canonical id of every category (itself for winners), and the merges behind it.
    public static func resolve(_ categories: [Category]) -> (canonical: [String: String], merges: [Merge]) {
        let byID = Dictionary(categories.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var canonical = Dictionary(uniqueKeysWithValues: byID.keys.map { ($0, $0) })
        // Iterate to a fixed point: each pass re-keys categories by their parents' current
        // canonical ids. Depth bounds the passes; the cap guards against parent cycles.
        for _ in 0...min(categories.count, 64) {
            var winners: [String: String] = [:]
            var keys: [String: String] = [:]
            for category in byID.values {
                let parent = category.parentId.flatMap { canonical[$0] ?? $0 } ?? ""
                let key = normalizedName(category.name) + "\u{0}" + parent
                keys[category.id] = key
                if let current = winners[key], current < category.id { continue }
                winners[key] = category.id
            }
            let next = keys.mapValues { winners[$0]! }
            if next == canonical { break }
            canonical = next
        }
        let merges = canonical.filter { $0.key != $0.value }.sorted { $0.key < $1.key }.map { loser, winner in
            let category = byID[loser]!
            let parent = category.parentId.flatMap { canonical[$0] ?? $0 }
            return Merge(
                loser: loser, winner: winner,
                reason: "same name '\(normalizedName(category.name))'" + (parent.map { " under the same parent \($0)" } ?? " at the top level"))
        }
        return (canonical, merges)
    }
}
