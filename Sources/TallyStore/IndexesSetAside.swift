import GRDB

/// Secondary indexes set aside while one transaction writes at least half as many rows into
/// a table as it holds: dropped before the writes and created again after them, in the same
/// transaction, so SQLite builds each with one sort instead of a B-tree insertion per row —
/// what a first load gets by making its indexes after its rows. Creating an index again costs
/// in proportion to the table, at most twice the writes, so the work stays bounded by the bulk
/// (`tally-bench recurring`: 365,100 occurrences written into views of 200,000 took 25 µs per
/// entity with their six indexes updated row by row, 9 µs with the indexes made again).
///
/// Unique indexes stay: they carry constraints (and `INSERT OR REPLACE` targets) the writes rely on.
struct IndexesSetAside {
    /// The `CREATE INDEX` statements of the indexes dropped, in order.
    private(set) var statements: [String] = []

    /// Drops the non-unique indexes of every table holding fewer than twice `rows` rows.
    static func forWriting(rows: Int, _ db: Database) throws -> IndexesSetAside {
        var aside = IndexesSetAside()
        let indexes = try Row.fetchAll(
            db,
            sql: """
                SELECT name, tbl_name, sql FROM sqlite_master
                WHERE type = 'index' AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE%' ORDER BY tbl_name, name
                """)
        var counts: [String: Int] = [:]
        for index in indexes {
            let (name, table, sql): (String, String, String) = (index["name"], index["tbl_name"], index["sql"])
            if counts[table] == nil {
                counts[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table.quotedDatabaseIdentifier)") ?? 0
            }
            guard let count = counts[table], count < 2 * rows else { continue }
            try db.execute(sql: "DROP INDEX \(name.quotedDatabaseIdentifier)")
            aside.statements.append(sql)
        }
        return aside
    }

    /// Creates the dropped indexes again (in the same transaction).
    func restore(_ db: Database) throws {
        for sql in statements { try db.execute(sql: sql) }
    }
}
