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
            throw DatabaseError(
                resultCode: .SQLITE_MISUSE, message: "\(values.count) values for \(sqlite3_bind_parameter_count(handle)) parameters", sql: statement.sql)
        }
        sqlite3_reset(handle)
        let code = bindingValues(values, from: 0, handle) { sqlite3_step(handle) }
        guard code == SQLITE_DONE else {
            let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
            sqlite3_clear_bindings(handle)
            sqlite3_reset(handle)
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
        }
        sqlite3_clear_bindings(handle)  // text and blobs were bound in place: no pointer may outlive the step
        sqlite3_reset(handle)
    }

    /// Binds `values[index...]` and runs `step` while they are bound. Text and blobs are bound
    /// where they lie (`SQLITE_STATIC`, no copy), so each is bound inside its own `withUTF8` /
    /// `withUnsafeBytes`, nested around the binding of the rest and the step.
    private static func bindingValues(_ values: [DatabaseValue], from index: Int, _ handle: SQLiteStatement, _ step: () -> Int32) -> Int32 {
        guard index < values.count else { return step() }
        let position = Int32(index + 1)
        let inPlace = unsafeBitCast(OpaquePointer(bitPattern: 0), to: sqlite3_destructor_type.self)  // SQLITE_STATIC
        switch values[index].storage {
        case .null:
            sqlite3_bind_null(handle, position)
        case .int64(let number):
            sqlite3_bind_int64(handle, position, number)
        case .double(let number):
            sqlite3_bind_double(handle, position, number)
        case .string(var text):
            // An empty buffer may have no address, which SQLite would read as NULL.
            if text.isEmpty {
                sqlite3_bind_text(handle, position, "", 0, inPlace)
            } else {
                return text.withUTF8 { utf8 in
                    sqlite3_bind_text(handle, position, UnsafeRawPointer(utf8.baseAddress!).assumingMemoryBound(to: CChar.self), Int32(utf8.count), inPlace)
                    return bindingValues(values, from: index + 1, handle, step)
                }
            }
        case .blob(let data):
            if data.isEmpty {
                sqlite3_bind_zeroblob(handle, position, 0)
            } else {
                return data.withUnsafeBytes { bytes in
                    sqlite3_bind_blob(handle, position, bytes.baseAddress!, Int32(bytes.count), inPlace)
                    return bindingValues(values, from: index + 1, handle, step)
                }
            }
        }
        return bindingValues(values, from: index + 1, handle, step)
    }
}
