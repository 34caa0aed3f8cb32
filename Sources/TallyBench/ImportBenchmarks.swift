import CSV
import Foundation
import GRDB
import TallyCore
import TallyImport
import TallyLedger
import TallyLog
import TallyStore

/// Importing a statement (issue 19): a 100,000-row card statement CSV (UTF-8, the Samsung
/// card layout: a title row, `yyyy.mm.dd` dates, `원` amounts, a 합계 row) imported into an
/// empty ledger by `Ledger.importFile` — read, decoded, each row checked against the ledger,
/// appended durably as one batch and projected — rows/s. Baseline in the same run: the same
/// number of expense creates appended by `appendBulk` into a bare log (no checks, no views).
struct ImportBenchmarks {
    let workDirectory: String
    let rows: Int

    func run() async throws -> [BenchmarkResult] {
        var csv = "삼성카드 이용내역\n이용일,가맹점,이용금액,할부\n"
        for row in 0..<rows {
            let day = 1 + row % 28, month = 1 + row / 28 % 12
            csv +=
                "2026.\(String(format: "%02d", month)).\(String(format: "%02d", day)),가맹점 \(row % 997),\"\((1_000 + row % 50_000).formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US"))))원\",일시불\n"
        }
        csv += "합계,,,\n"
        let bytes = Array(csv.utf8)
        if ProcessInfo.processInfo.environment["IMPORT_TRACE"] != nil {
            var mark = Date()
            let text = try StatementEncoding.decode(bytes).text
            print("import trace: decode \(String(format: "%.2f", Date().timeIntervalSince(mark))) s"); mark = Date()
            var records = 0
            let reader = try CSVReader(string: text, hasHeaderRow: false)
            while reader.next() != nil { records += 1 }
            print("import trace: CSV.swift alone \(records) records \(String(format: "%.2f", Date().timeIntervalSince(mark))) s"); mark = Date()
            let statement = try StatementReader.csv(bytes, options: StatementOptions())
            print("import trace: whole read \(statement.rows.count) rows \(String(format: "%.2f", Date().timeIntervalSince(mark))) s")
        }
        let directory = try freshBenchDirectory("import", in: workDirectory)
        let ledger = try Ledger(directory: directory)
        let began = Date()
        let report = try await ledger.importFile(bytes, fileName: "bench.csv", format: "csv", dryRun: false, skipBadRows: false, actor: "bench") { bytes in
            try StatementReader.file(bytes, format: "csv", options: StatementOptions())
        }
        let elapsed = Date().timeIntervalSince(began)
        ledger.close()
        guard report.created.count == rows else { throw BenchError("imported \(report.created.count) of \(rows) rows") }

        let bare = try freshBenchDirectory("import-bare", in: workDirectory)
        let writer = try bare.openWriter()
        let now = DateTime.nowHere
        let drafts = (0..<rows).map { row in
            EventDraft(
                entityType: .expense, entityID: .uuid(UUID()), operation: .create,
                properties: [
                    .kind: .string("expense"), .amount: .int(Int64(1_000 + row % 50_000)), .currency: .string("KRW"), .date: .dateTime(now),
                    .repeat: .string("none"), .payee: .string("가맹점 \(row % 997)"),
                ], actor: "bench")
        }
        let bulkStart = Date()
        _ = try writer.appendBulk(drafts)
        let bulkElapsed = Date().timeIntervalSince(bulkStart)
        writer.close()
        print("import: \(rows) rows (\(bytes.count >> 10) KiB) in \(String(format: "%.2f", elapsed)) s")
        let bound = try sqliteInsertBound()
        print("import: appendBulk of as many creates \(Int(Double(rows) / bulkElapsed)) rows/s")
        return [
            BenchmarkResult(
                name: "sqlite_insert_bound", value: bound, unit: "rows/s", baseline: Double(rows) / bulkElapsed,
                baselineName: "appendBulk of as many expense creates (no checks, no views)"),
            BenchmarkResult(
                name: "import_csv_rows", value: Double(rows) / elapsed, unit: "rows/s", baseline: bound,
                baselineName: "sqlite_insert_bound (SQLite alone inserting as many expense rows), rows/s"),
        ]
    }

    /// `sqlite_insert_bound`: SQLite alone inserting `rows` rows into the views' `expenses`
    /// table (the migrated schema, every index), generated inside the engine by a recursive CTE
    /// (no Swift, no binding), in one transaction with its commit — what no import can beat.
    func sqliteInsertBound() throws -> Double {
        let directory = try freshBenchDirectory("sqlite-bound", in: workDirectory)
        let database = try ProjectionDatabase.open(directory)
        defer { try? database.close() }
        let start = Date()
        try database.write { db in
            try db.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                    INSERT INTO expenses (id, kind, amount, currency, date, date_ms, month, payee, payment, memo, tags, repeat, attachments)
                    SELECT lower(hex(randomblob(16))), 'expense', 1000 + i % 50000, 'KRW', '2026-03-01T12:00:00+09:00',
                           1767225600000 + i * 60000, '2026-' || printf('%02d', 1 + i % 12), '가맹점 ' || (i % 997), 'card', '', '[]', 'none', '[]'
                    FROM n
                    """, arguments: [rows])
        }
        return Double(rows) / Date().timeIntervalSince(start)
    }
}
