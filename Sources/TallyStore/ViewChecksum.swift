import Crypto
import Foundation
import GRDB
import TallyCore

/// Per-table row counts and content checksums of a views database, and what differs between
/// two of them — how a rebuild proves the live views have (not) drifted.
public struct ViewChecksum: Sendable, Equatable {
    /// One table's summary.
    public struct Table: Sendable, Equatable {
        public var name: String
        public var rows: Int
        /// SHA-256 over every row (in primary-key order) of its columns' values.
        public var checksum: String
        /// Hash of each row by primary key, to name what differs.
        var rowHashes: [String: Data]

        public static func == (lhs: Table, rhs: Table) -> Bool {
            lhs.name == rhs.name && lhs.rows == rhs.rows && lhs.checksum == rhs.checksum
        }
    }

    /// Every view table.
    public var tables: [Table]

    /// The tables compared, with their primary keys and the rows that count. A running total
    /// whose rows were all deleted stays as a row of zeros (the triggers only subtract); views
    /// written from scratch have no such row, so a row of zeros is not compared — one that
    /// counts no rows but holds an amount is, as the drift it is.
    static let tableKeys: [(name: String, key: String, counted: String)] = [
        ("projection_checkpoint", "id", "true"), ("entity_state", "id", "true"), ("expenses", "id", "true"),
        ("expense_tags", "expense_id, tag", "true"), ("categories", "id", "true"), ("category_merges", "loser_id", "true"),
        ("todos", "id", "true"), ("settings", "scope, key", "true"), ("budgets", "id", "true"), ("accounts", "id", "true"),
        ("transfers", "id", "true"), ("settlements", "id", "true"), ("expense_lines", "id", "true"),
        ("conflicts", "entity_id, property, loser_hlc, loser_origin", "true"),
        ("month_totals", "month, category_id, kind, currency", Self.someTotal), ("account_days", "account_id, day, currency", Self.someTotal),
    ]

    /// A running total's row that is not all zeros.
    static let someTotal = "NOT (n = 0 AND high = 0 AND low = 0)"

    /// Reads and hashes every table.
    public static func compute(_ db: Database) throws -> ViewChecksum {
        var tables: [Table] = []
        for (name, key, counted) in tableKeys {
            var total = SHA256()
            var rowHashes: [String: Data] = [:]
            var count = 0
            let keyColumns = key.split(separator: ",").count
            let rows = try Row.fetchCursor(db, sql: "SELECT * FROM \(name) WHERE \(counted) ORDER BY \(key)")
            while let row = try rows.next() {
                var bytes: [UInt8] = []
                var keyText = ""
                for (index, value) in row.databaseValues.enumerated() {
                    if index < keyColumns { keyText += (keyText.isEmpty ? "" : "/") + "\(value)" }
                    append(value, to: &bytes)
                }
                let digest = SHA256.hash(data: bytes)
                total.update(data: Data(digest))
                rowHashes[keyText] = Data(digest)
                count += 1
            }
            tables.append(Table(name: name, rows: count, checksum: Hex.lowercase(total.finalize()), rowHashes: rowHashes))
        }
        return ViewChecksum(tables: tables)
    }

    /// A type tag and the value's bytes, length-prefixed so no two rows serialise alike.
    private static func append(_ value: DatabaseValue, to bytes: inout [UInt8]) {
        func prefixed(_ tag: UInt8, _ payload: some Collection<UInt8>) {
            bytes.append(tag)
            withUnsafeBytes(of: UInt32(payload.count).littleEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: payload)
        }
        switch value.storage {
        case .null: bytes.append(0)
        case .int64(let number): withUnsafeBytes(of: number.littleEndian) { prefixed(1, $0) }
        case .double(let number): withUnsafeBytes(of: number.bitPattern.littleEndian) { prefixed(2, $0) }
        case .string(let text): prefixed(3, Array(text.utf8))
        case .blob(let data): prefixed(4, data)
        }
    }

    /// Human-readable differences from `other` ("expenses: 3 rows differ: id1, id2, …"); empty when equal.
    public func differences(from other: ViewChecksum, limit: Int = 10) -> [String] {
        var lines: [String] = []
        for (mine, theirs) in zip(tables, other.tables) where mine != theirs {
            let keys = Set(mine.rowHashes.keys).union(theirs.rowHashes.keys)
            let differing = keys.filter { mine.rowHashes[$0] != theirs.rowHashes[$0] }.sorted()
            lines.append(
                "\(mine.name): \(mine.rows) rows vs \(theirs.rows) rebuilt, \(differing.count) differ"
                    + (differing.isEmpty ? "" : ": " + differing.prefix(limit).joined(separator: ", ") + (differing.count > limit ? ", …" : "")))
        }
        return lines
    }
}
