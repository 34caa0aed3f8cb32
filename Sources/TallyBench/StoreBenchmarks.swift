import Foundation
import GRDB
import TallyCore
import TallyLog
import TallyStore

/// The projection benchmarks of issue 3, each beside a baseline from the same run.
struct StoreBenchmarks {
    let workDirectory: String
    let events: Int
    let expenseRows: Int

    func run() throws -> [BenchmarkResult] {
        let path = workDirectory + "/store"
        try? FileManager.default.removeItem(atPath: path)
        let directory = try DataDirectory.create(path: path, name: "bench")
        let writer = try directory.openWriter()
        _ = try writer.appendBulk(SyntheticLedger.drafts(count: events))
        writer.close()

        // Baseline: the final rows (one per expense and category) bulk-inserted raw into the same schema.
        let finalRows = (events - 20) / 5 + 20
        let baselineRate = try rawBulkInsert(rows: finalRows)

        // First load: catch-up into empty views (one transaction, indexes built after the rows).
        var projector = try Projector(directory: directory)
        var start = now()
        try projector.catchUp()
        let firstLoadRate = Double(events) / (now() - start)
        try projector.database.close()

        // Incremental: fresh views that already hold the 20 categories catch up the rest in batches.
        try removeViews(of: directory)
        projector = try Projector(directory: directory)
        var categories: [LoggedEvent] = []
        try directory.reader.forEachEvent { if $0.index <= 20 { categories.append($0) } }
        try projector.apply(categories)
        start = now()
        try projector.catchUp()
        let incrementalRate = Double(events - 20) / (now() - start)
        try projector.database.close()

        start = now()
        let report = try ProjectionRebuilder.rebuild(directory, verifyOnly: false)
        let rebuildRate = Double(events) / (now() - start)
        precondition(report.differences.isEmpty, "rebuild differs from incremental: \(report.differences)")

        var results = [
            BenchmarkResult(
                name: "rebuild_projections", value: rebuildRate, unit: "events/s", baseline: baselineRate,
                baselineName: "raw SQLite insert of the \(finalRows) final rows, rows/s"),
            BenchmarkResult(
                name: "first_load", value: firstLoadRate, unit: "events/s", baseline: baselineRate,
                baselineName: "raw SQLite insert, rows/s"),
            BenchmarkResult(
                name: "incremental_apply", value: incrementalRate, unit: "events/s", baseline: baselineRate,
                baselineName: "raw SQLite insert, rows/s"),
        ]
        results += try queryLatency()
        return results
    }

    /// Deletes a replica's views (every generation and the link), as if it had never projected.
    func removeViews(of directory: DataDirectory) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasPrefix("projections") {
            try FileManager.default.removeItem(atPath: directory.path + "/" + name)
        }
    }

    /// Rows per second for inserting `rows` expense rows with a prepared statement in one
    /// transaction into the migrated schema (indexes included).
    func rawBulkInsert(rows: Int) throws -> Double {
        let path = workDirectory + "/raw-insert"
        try? FileManager.default.removeItem(atPath: path)
        let directory = try DataDirectory.create(path: path, name: "raw")
        let database = try ProjectionDatabase.open(directory)
        // Arguments are made before the clock starts: the baseline is SQLite's cost alone.
        let arguments: [StatementArguments] = (0..<rows).map { row in
            [UUID().lowercased, 1000 + row, 1_704_067_200_000 + Int64(row) * 60_000, "2024-0\(row % 9 + 1)", "category-\(row % 20)"]
        }
        let start = now()
        try database.write { db in
            let statement = try db.makeStatement(
                sql: """
                    INSERT INTO expenses (id, kind, amount, currency, date, date_ms, month, category_id, payment, memo, tags, repeat, attachments)
                    VALUES (?, 'expense', ?, 'KRW', '2026-03-01T12:00:00+09:00', ?, ?, ?, 'card', '점심', '["work"]', 'none', '[]')
                    """)
            for row in arguments { try statement.execute(arguments: row) }
        }
        return Double(rows) / (now() - start)
    }

    /// `expenses list --month` and `summary --month` at `expenseRows` expenses, against a point lookup by id.
    func queryLatency() throws -> [BenchmarkResult] {
        let path = workDirectory + "/latency-views"
        try? FileManager.default.removeItem(atPath: path)
        let directory = try DataDirectory.create(path: path, name: "latency")
        let database = try ProjectionDatabase.open(directory)
        var someID = ""
        try database.write { db in
            let statement = try db.makeStatement(
                sql: """
                    INSERT INTO expenses (id, kind, amount, currency, date, date_ms, month, category_id, payment, memo, tags, repeat, attachments, account_id)
                    VALUES (?, ?, ?, 'KRW', ?, ?, ?, ?, ?, '점심', '[]', 'none', '[]', ?)
                    """)
            for row in 0..<expenseRows {
                let millis = 1_704_067_200_000 + Int64(row) * (1_095 * 86_400_000 / Int64(expenseRows))
                let date = DateTime(epochMillis: millis, offsetMinutes: 540)
                let id = UUID().uuidString.lowercased()
                if row == expenseRows / 2 { someID = id }
                try statement.execute(arguments: [
                    id, row % 50 == 0 ? "income" : "expense", 1000 + row % 997, date.description, millis,
                    date.localMonth, "category-\(row % 20)", ["card", "cash", "transfer"][row % 3], "account-\(row % 5)",
                ])
            }
            // Five accounts, and a transfer between two of them every hundred expenses.
            for account in 0..<5 {
                try db.execute(
                    sql: """
                        INSERT INTO accounts (id, name, kind, currency, opening_balance, opening_date, is_archived, opening_ms)
                        VALUES (?, ?, 'bank', 'KRW', 1000000, '2024-01-01T00:00:00+09:00', 0, 1704034800000)
                        """, arguments: ["account-\(account)", "Account \(account)"])
            }
            // The first a card closing on the 14th and paying on the 1st: a fifth of the expenses are card purchases.
            try db.execute(sql: "UPDATE accounts SET kind = 'card', closing_day = 14, payment_day = 1 WHERE id = 'account-0'")
            let transfer = try db.makeStatement(
                sql: "INSERT INTO transfers (id, account_id, to_account_id, amount, date, date_ms, month) VALUES (?, ?, ?, 50000, ?, ?, ?)")
            for row in stride(from: 0, to: expenseRows, by: 100) {
                let millis = 1_704_067_200_000 + Int64(row) * (1_095 * 86_400_000 / Int64(expenseRows))
                let date = DateTime(epochMillis: millis, offsetMinutes: 540)
                try transfer.execute(arguments: [
                    UUID().uuidString.lowercased(), "account-\(row % 5)", "account-\((row + 1) % 5)", date.description, millis, date.localMonth,
                ])
            }
        }
        func p50(_ body: (Database) throws -> Void) throws -> Double {
            var samples: [Double] = []
            for _ in 0..<40 {
                let start = now()
                try database.read(body)
                samples.append((now() - start) * 1000)
            }
            return quantile(samples, 0.5)
        }
        let pointLookup = try p50 { db in _ = try ProjectionQueries.expense(db, id: someID) }
        var filter = ExpenseFilter()
        filter.month = "2025-06"
        filter.limit = 100
        let list = try p50 { db in _ = try ProjectionQueries.expenses(db, filter) }
        let summary = try p50 { db in _ = try ProjectionQueries.summary(db, month: "2025-06") }
        let balances = try p50 { db in _ = try ProjectionQueries.accountBalances(db, at: 1_735_657_200_000) }  // 2025-01-01
        // The 12-month report's reads: a year of month totals, and every account's balance at
        // each month's end (what `LedgerViews.reportDocument` asks of the views).
        let report = try p50 { db in
            _ = try ProjectionQueries.monthTotals(db, from: "2025-01", to: "2025-12")
            for month in 0..<12 { _ = try ProjectionQueries.accountBalances(db, at: 1_735_657_200_000 + Int64(month) * 2_629_800_000) }
        }
        let byBill = try p50 { db in _ = try ProjectionQueries.summary(db, month: "2025-06", byBill: true) }
        // The year in review's reads: two years of month totals, the largest expenses, the balances at both ends.
        let year = try p50 { db in
            _ = try ProjectionQueries.monthTotals(db, from: "2024-01", to: "2025-12")
            _ = try ProjectionQueries.largestExpenses(db, from: "2025-01", to: "2025-12", limit: 5)
            for at: Int64 in [1_735_657_199_999, 1_767_193_199_999] { _ = try ProjectionQueries.accountBalances(db, at: at) }
        }
        return [
            BenchmarkResult(
                name: "summary_month_by_bill_p50", value: byBill, unit: "ms", baseline: summary,
                baselineName: "summary_month_p50 at \(expenseRows) rows, same run"),
            BenchmarkResult(
                name: "year_in_review_p50", value: year, unit: "ms", baseline: summary,
                baselineName: "summary_month_p50 at \(expenseRows) rows, same run"),
            BenchmarkResult(
                name: "report_12_months_p50", value: report, unit: "ms", baseline: summary,
                baselineName: "summary_month_p50 at \(expenseRows) rows, same run"),
            BenchmarkResult(
                name: "account_balances_p50", value: balances, unit: "ms", baseline: summary,
                baselineName: "summary_month_p50 at \(expenseRows) rows, same run"),
            BenchmarkResult(
                name: "expenses_list_month_p50", value: list, unit: "ms", baseline: pointLookup, baselineName: "get one expense by id at \(expenseRows) rows"),
            BenchmarkResult(
                name: "summary_month_p50", value: summary, unit: "ms", baseline: pointLookup, baselineName: "get one expense by id at \(expenseRows) rows"),
        ]
    }
}
