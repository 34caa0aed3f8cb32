import Foundation
import GRDB
import GRDBSQLite
import TallyCore

/// The JSON of an entity that has a view table — an expense, a to-do, a budget — written
/// straight from SQLite's row buffers: the one rendering of those entities, which the API, the
/// CLI's `--json`, single entities and lists all print.
///
/// The keys follow the spec (`ViewTable`): `id`, then each shown field in display order, with
/// what the views add beside some of them — a category's names after the category (when the
/// query joins them), `missingAttachments` after `attachments` (the digests whose blob this
/// replica lacks), and a table's trailing extras (a to-do's percentage and streaks, a budget's
/// `writtenForCategoryId` when it follows a merged duplicate).
///
/// No `String`, row struct or `JSONText` tree per row: a page of expenses is the hottest read.
public enum ViewRecordJSON {
    /// A query's columns and how each row of it is written.
    struct Selection: Sendable {
        /// The SELECT list: the table's columns (prefixed with `alias`), then the joined names.
        let sql: String
        let steps: [Step]
        /// All keys' bytes, each step's key a range of them (one buffer, so a row appends them
        /// without retaining an array per key).
        let keys: [UInt8]
        /// Where the cursor's columns are (lists by date).
        let dateMillis: Int32?
        let id: Int32

        static let expenses = Selection(.expenses, alias: "e", categoryNames: true)
        static let todos = Selection(.todos, alias: "t")
        static let budgets = Selection(.budgets, alias: "b")
        static let accounts = Selection(.accounts, alias: "a")
        static let transfers = Selection(.transfers, alias: "x")
        static let settlements = Selection(.settlements, alias: "s")
        static let lines = Selection(.lines, alias: "l")

        /// The selection of `table` read as `alias`; `categoryNames` adds the shown category's
        /// name and its parent's, from categories joined as `c` and `p`.
        init(_ table: ViewTable, alias: String, categoryNames: Bool = false) {
            var sql = table.columns.map { "\(alias).\($0.name)" }
            if categoryNames { sql += ["c.name AS category_name", "p.name AS parent_category_name"] }
            self.sql = sql.joined(separator: ", ")
            func position(_ name: String) -> Int32 {
                guard let index = table.columns.firstIndex(where: { $0.name == name }) else { preconditionFailure("\(table.name) has no column \(name)") }
                return Int32(index)
            }
            var keys: [UInt8] = []
            var steps: [Step] = []
            func add(_ key: String, _ value: Step.Value) {
                let start = keys.count
                keys += Array(((steps.isEmpty ? "{" : ",") + JSONText.quote(key) + ":").utf8)
                steps.append(Step(key: start..<keys.count, value: value))
            }
            add("id", .text(position("id")))
            for field in table.spec.shownFields {
                let column = position(table.shownColumn(of: field.name))
                switch field.kind {
                case .amount, .signedAmount, .count: add(field.name.jsonName, .integer(column))
                case .bool: add(field.name.jsonName, .flag(column))
                case .textSet, .days, .bools, .json, .shares: add(field.name.jsonName, .raw(column))
                case .digests:
                    add(field.name.jsonName, .raw(column))
                    add("missing" + field.name.jsonName.prefix(1).uppercased() + field.name.jsonName.dropFirst(), .missingDigests(column))
                case .choice, .currency, .dateTime, .month, .decimal, .reference, .text: add(field.name.jsonName, .text(column))
                }
                if categoryNames, table.columns[Int(column)].source == .shownCategory(field.name) {
                    add("categoryName", .text(Int32(table.columns.count)))
                    add("parentCategoryName", .text(Int32(table.columns.count) + 1))
                }
            }
            for extra in table.extras {
                switch extra {
                case .percentage: add("percentage", .double(position("percentage")))
                case .streaks: add("streaks", .streaks(isChallenge: position("is_challenge"), startDate: position("start_date"), checks: position("checks")))
                case .writtenForCategory:
                    let shown = table.shownColumn(of: .categoryId)
                    add("writtenForCategoryId", .writtenFor(written: position(ViewTable.writtenReference(shown)), shown: position(shown)))
                }
            }
            (self.keys, self.steps) = (keys, steps)
            dateMillis = table.columns.contains { $0.name == "date_ms" } ? position("date_ms") : nil
            id = position("id")
        }
    }

    /// One key and how its value is written.
    struct Step: Sendable {
        enum Value: Sendable {
            /// A text column as a JSON string, or null.
            case text(Int32)
            case integer(Int32)
            case double(Int32)
            case flag(Int32)
            /// A column holding JSON (a list), copied as it is.
            case raw(Int32)
            /// The digests of a list column whose blob this replica lacks.
            case missingDigests(Int32)
            /// A challenge's streaks today (null for a plain to-do).
            case streaks(isChallenge: Int32, startDate: Int32, checks: Int32)
            /// The category a budget was written for, when a merge made another stand for it;
            /// the key is left out otherwise.
            case writtenFor(written: Int32, shown: Int32)
        }
        let key: Range<Int>
        let value: Value
    }

    /// Rows as a JSON array, how many there were, and the last one's cursor fields.
    public struct Page: Sendable {
        public var items: [UInt8]
        public var count: Int
        public var last: (dateMillis: Int64, id: String)?
    }

    /// Runs `statement` (whose columns are `selection.sql`) and writes each row. `isHeld` says
    /// whether this replica holds an attachment's blob. Only for statements GRDB prepared on
    /// this connection, stepped here inside the read that holds it.
    static func write(
        _ statement: Statement, _ arguments: StatementArguments, _ selection: Selection, isHeld: (String) -> Bool, now: DateTime = .nowHere,
        _ db: Database
    ) throws -> Page {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        try statement.setArguments(arguments)
        defer { sqlite3_reset(handle) }
        var out: [UInt8] = [UInt8(ascii: "[")]
        out.reserveCapacity(16_384)
        var count = 0
        var last: (Int64, String)?
        try selection.keys.withUnsafeBufferPointer { keys in
            try selection.steps.withUnsafeBufferPointer { steps in
                while true {
                    let code = sqlite3_step(handle)
                    if code == SQLITE_DONE { break }
                    guard code == SQLITE_ROW else {
                        throw DatabaseError(
                            resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: statement.sql)
                    }
                    if count > 0 { out.append(UInt8(ascii: ",")) }
                    count += 1
                    let row = Columns(handle: handle)
                    for step in steps {
                        if case .writtenFor(let written, let shown) = step.value, row.text(written) == row.text(shown) { continue }
                        out.append(contentsOf: UnsafeBufferPointer(rebasing: keys[step.key]))
                        row.write(step.value, isHeld: isHeld, now: now, &out)
                    }
                    out.append(UInt8(ascii: "}"))
                    if let dateMillis = selection.dateMillis { last = (row.int64(dateMillis), row.text(selection.id) ?? "") }
                }
            }
        }
        out.append(UInt8(ascii: "]"))
        return Page(items: out, count: count, last: last)
    }

    /// One row's columns, read in place.
    private struct Columns {
        let handle: SQLiteStatement

        func write(_ value: Step.Value, isHeld: (String) -> Bool, now: DateTime, _ out: inout [UInt8]) {
            switch value {
            case .text(let column): string(column, &out)
            case .integer(let column):
                guard !isNull(column) else { return JSONText.null.write(to: &out) }
                JSONText.appendDecimal(int64(column), to: &out)
            case .double(let column): JSONText.double(sqlite3_column_double(handle, column)).write(to: &out)
            case .flag(let column): JSONText.bool(int64(column) != 0).write(to: &out)
            case .raw(let column):
                guard let bytes = bytes(column) else { return JSONText.null.write(to: &out) }
                out.append(contentsOf: bytes)
            case .missingDigests(let column):
                let digests = text(column) ?? "[]"
                guard digests != "[]" else { return out.append(contentsOf: [UInt8(ascii: "["), UInt8(ascii: "]")]) }
                JSONText.array(ProjectionQueries.jsonStrings(digests).filter { !isHeld($0) }.map(JSONText.string)).write(to: &out)
            case .streaks(let isChallenge, let startDate, let checks):
                let streaks = TodoRow.streaks(
                    isChallenge: int64(isChallenge) != 0, startDate: text(startDate), checks: ProjectionQueries.jsonBools(text(checks) ?? "[]"), now: now)
                ViewJSON.streaks(streaks).write(to: &out)
            case .writtenFor(let written, _): string(written, &out)
            }
        }

        func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

        func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

        /// A text column as a JSON string, or null.
        func string(_ column: Int32, _ out: inout [UInt8]) {
            guard let bytes = bytes(column) else { return JSONText.null.write(to: &out) }
            JSONText.appendQuoted(bytes, to: &out)
        }

        func text(_ column: Int32) -> String? {
            bytes(column).map { String(decoding: $0, as: UTF8.self) }
        }

        private func bytes(_ column: Int32) -> UnsafeBufferPointer<UInt8>? {
            guard !isNull(column), let text = sqlite3_column_text(handle, column) else { return nil }
            return UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column)))
        }
    }
}
