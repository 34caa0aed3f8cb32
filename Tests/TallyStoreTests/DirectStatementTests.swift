import Foundation
import GRDB
import Testing
@testable import TallyStore

@Suite struct DirectStatementTests {
    /// Every kind of value comes back as GRDB's own binding stores it — in particular an empty
    /// string stays an empty string and an empty blob stays a blob, not NULL, and text and blobs
    /// bound in place (small strings live inside the value, long ones on the heap) arrive whole.
    @Test func bindsEveryStorageKindLikeGRDB() throws {
        let queue = try DatabaseQueue()
        let values: [DatabaseValue] = [
            .null, 42.databaseValue, (-7.5).databaseValue, "".databaseValue, "naïve ☕".databaseValue,
            Data().databaseValue, Data([0, 1, 255]).databaseValue, Int64.min.databaseValue,
            String(repeating: "long text kept on the heap, ", count: 40).databaseValue,
            Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0 * 7) }).databaseValue,
        ]
        try queue.inTransaction { db in
            try db.execute(sql: "CREATE TABLE direct (n INTEGER PRIMARY KEY, v)")
            try db.execute(sql: "CREATE TABLE viaGRDB (n INTEGER PRIMARY KEY, v)")
            for (n, value) in values.enumerated() {
                try DirectStatement.execute(try db.cachedStatement(sql: "INSERT INTO direct (n, v) VALUES (?, ?)"), [n.databaseValue, value], db)
                try db.execute(sql: "INSERT INTO viaGRDB (n, v) VALUES (?, ?)", arguments: [n, value])
            }
            let direct = try Row.fetchAll(db, sql: "SELECT v, typeof(v) FROM direct ORDER BY n")
            let viaGRDB = try Row.fetchAll(db, sql: "SELECT v, typeof(v) FROM viaGRDB ORDER BY n")
            #expect(direct == viaGRDB)
            #expect(direct.map { $0[1] as String } == ["null", "integer", "real", "text", "text", "blob", "blob", "integer", "text", "blob"])
            return .commit
        }
    }

    /// A failing step throws SQLite's error (and the statement is usable again); a wrong number
    /// of values is refused before anything runs.
    @Test func failuresThrowAndChangeNothing() throws {
        let queue = try DatabaseQueue()
        try queue.inTransaction { db in
            try db.execute(sql: "CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)")
            let insert = try db.cachedStatement(sql: "INSERT INTO t (k, v) VALUES (?, ?)")
            try DirectStatement.execute(insert, ["a".databaseValue, 1.databaseValue], db)
            #expect(throws: DatabaseError.self) { try DirectStatement.execute(insert, ["a".databaseValue, 2.databaseValue], db) }
            #expect(throws: DatabaseError.self) { try DirectStatement.execute(insert, ["b".databaseValue, .null], db) }
            #expect(throws: DatabaseError.self) { try DirectStatement.execute(insert, ["c".databaseValue], db) }
            try DirectStatement.execute(insert, ["d".databaseValue, 4.databaseValue], db)
            #expect(try Row.fetchAll(db, sql: "SELECT k, v FROM t ORDER BY k").map { "\($0[0] as String)=\($0[1] as Int)" } == ["a=1", "d=4"])
            return .commit
        }
    }
}
