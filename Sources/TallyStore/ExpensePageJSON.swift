import Foundation
import GRDB
import GRDBSQLite
import TallyCore

/// A page of expenses written as the API's JSON straight from SQLite's row buffers: what
/// `ProjectionQueries.expenses` then `ViewJSON.expense` give, byte for byte (ExpensePageTests
/// holds them to it), without an `ExpenseRow`, a dozen `String`s and a `JSONText` tree per row
/// in between — most of a list request's time before this.
///
/// Only for statements GRDB prepared on this connection, stepped here inside the read that
/// holds the connection.
public enum ExpensePageJSON {
    /// The page's rows as a JSON array, how many there were, and the last one's cursor fields.
    public struct Page: Sendable {
        public var items: [UInt8]
        public var count: Int
        public var last: (dateMillis: Int64, id: String)?
    }

    /// Runs `statement` (the columns of `ExpenseColumn.selection`, in that order) and
    /// writes each row as `ViewJSON.expense` would. `isHeld` says whether this replica holds an
    /// attachment's blob (those it lacks are listed again under `missingAttachments`).
    static func write(_ statement: Statement, _ arguments: StatementArguments, isHeld: (String) -> Bool, _ db: Database) throws -> Page {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        try statement.setArguments(arguments)
        defer { sqlite3_reset(handle) }
        var out: [UInt8] = [UInt8(ascii: "[")]
        out.reserveCapacity(16_384)
        var count = 0
        var last: (Int64, String)?
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: statement.sql)
            }
            if count > 0 { out.append(UInt8(ascii: ",")) }
            count += 1
            let row = Columns(handle: handle)
            append(Keys.id, to: &out); row.string(.id, &out)
            append(Keys.kind, to: &out); row.string(.kind, &out)
            append(Keys.amount, to: &out); JSONText.appendDecimal(row.int64(.amount), to: &out)
            append(Keys.currency, to: &out); row.string(.currency, &out)
            append(Keys.date, to: &out); row.string(.date, &out)
            append(Keys.categoryId, to: &out); row.string(.categoryId, &out)
            append(Keys.categoryName, to: &out); row.string(.categoryName, &out)
            append(Keys.parentCategoryName, to: &out); row.string(.parentCategoryName, &out)
            append(Keys.payee, to: &out); row.string(.payee, &out)
            append(Keys.payment, to: &out); row.string(.payment, &out)
            append(Keys.memo, to: &out); row.string(.memo, &out)
            // Tags are stored as the JSON array `JSONText` writes (ViewRows): copied as they are.
            append(Keys.tags, to: &out); row.raw(.tags, &out)
            append(Keys.repeat, to: &out); row.string(.repeat, &out)
            let attachments = row.text(.attachments) ?? "[]"
            if attachments == "[]" {
                append(Keys.noAttachments, to: &out)
            } else {
                let digests = ProjectionQueries.jsonStrings(attachments)
                append(Keys.attachments, to: &out); JSONText.array(digests.map(JSONText.string)).write(to: &out)
                append(Keys.missingAttachments, to: &out); JSONText.array(digests.filter { !isHeld($0) }.map(JSONText.string)).write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
            last = (row.int64(.dateMillis), row.text(.id) ?? "")
        }
        out.append(UInt8(ascii: "]"))
        return Page(items: out, count: count, last: last)
    }

    /// One row's columns, read in place.
    private struct Columns {
        let handle: SQLiteStatement

        func int64(_ column: ExpenseColumn) -> Int64 { sqlite3_column_int64(handle, column.rawValue) }

        /// A text column as a JSON string, or null.
        func string(_ column: ExpenseColumn, _ out: inout [UInt8]) {
            guard let bytes = bytes(column) else { return append(Keys.null, to: &out) }
            JSONText.appendQuoted(bytes, to: &out)
        }

        /// A column holding JSON, copied as it is (null if NULL).
        func raw(_ column: ExpenseColumn, _ out: inout [UInt8]) {
            guard let bytes = bytes(column) else { return append(Keys.null, to: &out) }
            out.append(contentsOf: bytes)
        }

        func text(_ column: ExpenseColumn) -> String? {
            bytes(column).map { String(decoding: $0, as: UTF8.self) }
        }

        private func bytes(_ column: ExpenseColumn) -> UnsafeBufferPointer<UInt8>? {
            let index = column.rawValue
            guard sqlite3_column_type(handle, index) != SQLITE_NULL, let text = sqlite3_column_text(handle, index) else { return nil }
            return UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, index)))
        }
    }

    /// The keys, each with what comes before it, in `ViewJSON.expense`'s order. Static strings,
    /// not arrays: appending a shared array retains it, and 16 atomic retains of the same few
    /// objects per row, from every thread serving a list, were an eighth of a list's CPU.
    private enum Keys {
        static let id: StaticString = #"{"id":"#, kind: StaticString = #","kind":"#, amount: StaticString = #","amount":"#
        static let currency: StaticString = #","currency":"#, date: StaticString = #","date":"#, categoryId: StaticString = #","categoryId":"#
        static let categoryName: StaticString = #","categoryName":"#, parentCategoryName: StaticString = #","parentCategoryName":"#
        static let payee: StaticString = #","payee":"#, payment: StaticString = #","payment":"#, memo: StaticString = #","memo":"#
        static let tags: StaticString = #","tags":"#, `repeat`: StaticString = #","repeat":"#, attachments: StaticString = #","attachments":"#
        static let missingAttachments: StaticString = #","missingAttachments":"#
        static let noAttachments: StaticString = #","attachments":[],"missingAttachments":[]"#
        static let null: StaticString = "null"
    }

    private static func append(_ key: StaticString, to out: inout [UInt8]) {
        key.withUTF8Buffer { out.append(contentsOf: $0) }
    }
}
