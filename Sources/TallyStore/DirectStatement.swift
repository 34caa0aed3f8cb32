import Foundation
import GRDB
import GRDBSQLite

/// Runs a prepared statement that returns no rows with its values bound straight through the
/// SQLite C API: what GRDB's `execute(arguments:)` does, without building and validating a
/// `StatementArguments` copy of the values first. The view writers run their INSERTs hundreds
/// of thousands of times in a first load, where those copies (and their retains and releases)
/// cost more than SQLite's own work: `perf` put 60 % of the row-writing time outside
/// `sqlite3_step`.
///
/// Only for statements GRDB prepared on this connection (`cachedStatement`), run inside a
/// transaction the caller holds.
enum DirectStatement {
    static func execute(_ statement: Statement, _ values: [DatabaseValue], _ db: Database) throws {
        let handle = statement.sqliteStatement
        guard sqlite3_bind_parameter_count(handle) == Int32(values.count) else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "\(values.count) values for \(sqlite3_bind_parameter_count(handle)) parameters", sql: statement.sql)
        }
        sqlite3_reset(handle)
        for (offset, value) in values.enumerated() { bind(value, at: Int32(offset + 1), handle) }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else {
            let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
            sqlite3_reset(handle)
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
        }
        sqlite3_reset(handle)
    }

    /// Binds one value; SQLite copies text and blobs (`SQLITE_TRANSIENT`), so nothing has to
    /// outlive the call.
    private static func bind(_ value: DatabaseValue, at index: Int32, _ handle: SQLiteStatement) {
        let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
        switch value.storage {
        case .null:
            sqlite3_bind_null(handle, index)
        case .int64(let number):
            sqlite3_bind_int64(handle, index, number)
        case .double(let number):
            sqlite3_bind_double(handle, index, number)
        case .string(var text):
            // An empty buffer may have no address, which SQLite would read as NULL.
            if text.isEmpty { sqlite3_bind_text(handle, index, "", 0, transient); return }
            _ = text.withUTF8 { sqlite3_bind_text(handle, index, UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), Int32($0.count), transient) }
        case .blob(let data):
            if data.isEmpty { sqlite3_bind_zeroblob(handle, index, 0); return }
            _ = data.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress!, Int32($0.count), transient) }
        }
    }
}
