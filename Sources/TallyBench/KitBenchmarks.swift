import Foundation
import GRDB
import TallyCore
import TallyKit
import TallyLedger
import TallyLog

/// `tally-bench kit` (issue 33): what an app embedding TallyKit waits for.
///
/// - `kit_open_first_query`: a new process opens a 100,000-event replica (`Replica.open`) and
///   answers its first query (this month's summary) — an app's launch, or its widget's
///   timeline refresh. Baseline: the same process opening the views' SQLite file with GRDB and
///   reading one row (what any SQLite-backed app pays at launch).
/// - `kit_watch_reemit_p99`: a watched query in this process yields again after a create in
///   another process (the widget's check-in seen by the app), p99 from the writer's
///   acknowledgement to the new answer. Baseline: the writer's median durable create.
/// - `kit_sync_backlog`: a new replica syncs a 10,000-event backlog from `tally serve`,
///   events/s. Baseline: `tally sync` (the CLI) of the same backlog into another new replica.
struct KitBenchmarks {
    let workDirectory: String
    let tallyBinary: String
    let events: Int
    let writes: Int

    func run() async throws -> [BenchmarkResult] {
        [try openFirstQuery(), try await watchReemit(), try await syncBacklog()]
    }

    /// `tally-bench kit-child-open DIR`: the child's own measurement, printed as
    /// "<open+query ms> <sqlite ms>" (each its own cold open: a new connection, nothing cached in-process).
    static func childOpen(_ folder: String) async throws {
        let sqliteStart = now()
        let views = try DatabaseQueue(
            path: folder + "/projections.sqlite",
            configuration: {
                var c = Configuration(); c.readonly = true; return c
            }())
        _ = try await views.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM settings") }
        let sqliteSeconds = now() - sqliteStart
        let start = now()
        let replica = try await Replica.open(at: folder, actor: "bench")
        _ = try replica.query.summary(month: "2026-03")
        print(String(format: "%.3f %.3f", (now() - start) * 1000, sqliteSeconds * 1000))
    }

    /// `tally-bench kit-child-write DIR COUNT`: creates COUNT expenses 20 ms apart, printing
    /// the monotonic time of each acknowledgement and how long the create took.
    static func childWrite(_ folder: String, count: Int) async throws {
        let replica = try await Replica.open(at: folder, actor: "widget", writerIdleRelease: .seconds(60))
        for number in 0..<count {
            let start = now()
            try await replica.create(ExpenseFields(amount: Int64(number + 1)))
            let acknowledged = now()
            FileHandle.standardOutput.write(Data(String(format: "%.6f %.6f\n", acknowledged, acknowledged - start).utf8))
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    private func child(_ arguments: [String]) throws -> String {
        try runProcess([CommandLine.arguments[0]] + arguments)
    }

    func openFirstQuery() throws -> BenchmarkResult {
        let directory = try freshBenchDirectory("kit-open", in: workDirectory)
        try directory.openWriter().close()
        let writer = try directory.openWriter()
        _ = try writer.appendBulk(SyntheticLedger.drafts(count: events))
        writer.close()
        let ledger = try Ledger(directory: directory)  // the views caught up, as an app leaves them
        ledger.close()
        var opens: [Double] = [], sqlite: [Double] = []
        for _ in 0..<9 {
            let parts = try child(["kit-child-open", directory.path]).split(separator: " ").compactMap {
                Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            guard parts.count == 2 else { throw BenchError("kit-child-open printed nothing usable") }
            opens.append(parts[0])
            sqlite.append(parts[1])
        }
        return BenchmarkResult(
            name: "kit_open_first_query", value: quantile(opens, 0.5), unit: "ms", baseline: quantile(sqlite, 0.5),
            baselineName: "GRDB open + one read, same process")
    }

    func watchReemit() async throws -> BenchmarkResult {
        let folder = workDirectory + "/kit-watch"
        try? FileManager.default.removeItem(atPath: folder)
        let app = try await Replica.open(at: folder, actor: "app")
        let seen = Seen()
        let watcher = Task {
            for try await count in app.watch({ try $0.expenses(limit: 1_000).count }) { await seen.add(count, at: now()) }
        }
        defer { watcher.cancel() }
        let output = try child(["kit-child-write", folder, String(writes)])
        try await Task.sleep(for: .milliseconds(200))
        let lines = output.split(separator: "\n").map { $0.split(separator: " ").compactMap { Double($0) } }.filter { $0.count == 2 }
        var latencies: [Double] = []
        for (index, line) in lines.enumerated() {
            guard let emitted = await seen.time(of: index + 1) else { throw BenchError("the watcher never saw write \(index + 1)") }
            latencies.append(max(0, emitted - line[0]) * 1000)
        }
        return BenchmarkResult(
            name: "kit_watch_reemit_p99", value: quantile(latencies, 0.99), unit: "ms", baseline: quantile(lines.map { $0[1] * 1000 }, 0.5),
            baselineName: "median create in the writing process")
    }

    /// When the watcher saw each answer.
    actor Seen {
        var times: [Int: Double] = [:]
        func add(_ count: Int, at time: Double) { times[count] = times[count] ?? time }
        func time(of count: Int) -> Double? { times[count] }
    }

    func syncBacklog() async throws -> BenchmarkResult {
        let source = try freshBenchDirectory("kit-source", in: workDirectory)
        try source.openWriter().close()
        let writer = try source.openWriter()
        _ = try writer.appendBulk(SyntheticLedger.drafts(count: 10_000))
        writer.close()
        let token = try runProcess([tallyBinary, "token", "create", "--data-dir", source.path, "--name", "kit", "--scope", "replicate,read"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let port = 18_433
        let server = try startProcess([tallyBinary, "serve", "--data-dir", source.path, "--port", "\(port)"])
        defer { server.terminate() }
        try await waitForHealth("http://127.0.0.1:\(port)/health")

        let cli = try freshBenchDirectory("kit-cli", in: workDirectory)
        try cli.openWriter().close()
        var start = now()
        _ = try runProcess([tallyBinary, "sync", "http://127.0.0.1:\(port)", "--token", token, "--data-dir", cli.path])
        let cliSeconds = now() - start

        let folder = workDirectory + "/kit-app"
        try? FileManager.default.removeItem(atPath: folder)
        let replica = try await Replica.open(at: folder, actor: "app")
        start = now()
        let report = try await replica.sync(with: SyncServer(url: "http://127.0.0.1:\(port)", token: token))
        let seconds = now() - start
        guard report.pulled == 10_000 else { throw BenchError("the kit's sync pulled \(report.pulled) of 10000") }
        return BenchmarkResult(
            name: "kit_sync_backlog", value: 10_000 / seconds, unit: "events/s", baseline: 10_000 / cliSeconds, baselineName: "tally sync of the same backlog")
    }
}
