import Foundation
import GRDB
import Testing
@testable import TallyStore
import TallyTestSupport

/// The category tree is walked with a stack of its own: nothing bounds how deep a chain of
/// parents goes (a member's push or a peer's events are not held to a depth), and a thread's
/// stack is. Found by review: the walk recursed once per level, so a chain deep enough
/// overflowed the stack of the request that listed the categories and killed the server.
@Suite struct CategoryTreeTests {
    @Test func aChainOfAHundredThousandLevelsIsListedInOrderWithItsDepths() throws {
        let folder = TemporaryDirectory()
        let pool = try DatabasePool(path: folder.file("views.sqlite"), configuration: ProjectionDatabase.configuration())
        defer { try? pool.close() }
        try ProjectionDatabase.migrate(pool)
        let levels = 100_000
        try pool.write { db in
            // c1 at the top, each next one under the one before; names sort against the chain.
            try db.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                    INSERT INTO categories (id, name, parent_id, kind)
                    SELECT 'c' || i, printf('%06d', ? - i), CASE WHEN i = 1 THEN NULL ELSE 'c' || (i - 1) END, 'expense' FROM n
                    """, arguments: [levels, levels])
            // Beside it, a sibling at the top and a cycle no top-level category leads to.
            try db.execute(
                sql: """
                    INSERT INTO categories (id, name, parent_id, kind) VALUES
                    ('top', 'zzz', NULL, 'expense'), ('loop-a', 'a', 'loop-b', 'expense'), ('loop-b', 'b', 'loop-a', 'expense')
                    """)
        }
        let tree = try pool.read { try ProjectionQueries.categoryTree($0) }
        #expect(tree.count == levels + 3)
        #expect(tree.prefix(levels).enumerated().allSatisfy { position, item in item.category.id == "c\(position + 1)" && item.depth == position })
        #expect(tree.dropFirst(levels).map(\.category.id) == ["top", "loop-a", "loop-b"])
        #expect(tree.dropFirst(levels).map(\.depth) == [0, 0, 0])
    }
}
