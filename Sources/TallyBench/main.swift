import Foundation

// tally-bench [--quick] [NAME…]: every benchmark, or the named groups, run through scripts/bench
// (`hosting` and `reopen` run only when named)
// in release mode. NAMEs: latency, concurrent, bulk (also bytes per event and reads), store, sync, attachments, recurring, asof, import, http (with append_64_writers as its baseline), feed, merge (the sync group's merge row alone), kit (TallyKit).
let arguments = CommandLine.arguments.dropFirst()
// The kit group's child processes (a new process per measurement, as an app or widget is).
if arguments.first == "kit-child-open", arguments.count == 2 {
    try await KitBenchmarks.childOpen(arguments[arguments.startIndex + 1])
    exit(0)
}
if arguments.first == "kit-child-write", arguments.count == 3, let count = Int(arguments[arguments.startIndex + 2]) {
    try await KitBenchmarks.childWrite(arguments[arguments.startIndex + 1], count: count)
    exit(0)
}
let quick = arguments.contains("--quick")
let only = Set(arguments.filter { !$0.hasPrefix("--") })
func enabled(_ name: String) -> Bool { only.isEmpty || only.contains(name) }  // "peers" runs only when named

let workDirectory = ProcessInfo.processInfo.environment["BENCH_DIR"] ?? FileManager.default.currentDirectoryPath + "/.build/bench-work"
try FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: true)
let benchmarks = LogBenchmarks(workDirectory: workDirectory, bulkEvents: quick ? 100_000 : 1_000_000, latencySamples: quick ? 200 : 2_000)
print("work directory: \(workDirectory)")

var results: [BenchmarkResult] = []
if enabled("latency") { results += try benchmarks.singleWriterLatency() }
if enabled("concurrent") { results.append(try benchmarks.concurrentWriters()) }
if enabled("bulk") {
    let drafts = LogBenchmarks.ledgerDrafts(benchmarks.bulkEvents)
    let (bulk, bulkPath) = try benchmarks.bulkAppend(drafts)
    results.append(bulk)
    if !arguments.contains("--append-only") {
        results.append(try benchmarks.bytesPerEvent(logPath: bulkPath))
        results.append(try benchmarks.sequentialRead(logPath: bulkPath))
    }
}
if enabled("store") {
    results += try StoreBenchmarks(workDirectory: workDirectory, events: quick ? 100_000 : 1_000_000, expenseRows: quick ? 100_000 : 1_000_000).run()
}
if only.contains("peers") {  // scripts/bench-peers only: Tally's side of the peer comparison
    try PeerBenchmarks(workDirectory: workDirectory).run()
}
if enabled("sync") {
    let tally = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("tally").path
    results += try await SyncBenchmarks(
        workDirectory: workDirectory, tallyBinary: tally, events: quick ? 100_000 : 1_000_000,
        mergeEvents: quick ? 50_000 : 500_000, mergeExpenses: quick ? 5_000 : 50_000
    ).run()
}
if only.contains("merge") && !only.contains("sync") {  // `merge`: the sync group's merge row alone
    let tally = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("tally").path
    results.append(
        try SyncBenchmarks(
            workDirectory: workDirectory, tallyBinary: tally, events: 0,
            mergeEvents: quick ? 50_000 : 500_000, mergeExpenses: quick ? 5_000 : 50_000
        ).mergeAlone())
}
if enabled("attachments") {
    let tally = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("tally").path
    results += try await AttachmentBenchmarks(
        workDirectory: workDirectory, tallyBinary: tally, files: quick ? 20 : 100, photoSamples: quick ? 5 : 21, heldBlobs: quick ? 10_000 : 50_000
    ).run()
}
if enabled("recurring") {
    results += try await RecurrenceBenchmarks(workDirectory: workDirectory, rules: quick ? 10 : 100, years: 10).run()
}
if enabled("import") {
    results += try await ImportBenchmarks(workDirectory: workDirectory, rows: quick ? 10_000 : 100_000).run()
}
if enabled("asof") {
    results += try AsOfBenchmarks(workDirectory: workDirectory, events: quick ? 100_000 : 1_000_000, samples: quick ? 9 : 21).run()
}
if enabled("http") {
    let tally = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("tally").path
    let appends = try benchmarks.concurrentWriters()  // the create row's baseline, same run
    results.append(appends)
    results += try await HTTPBenchmarks(workDirectory: workDirectory, tallyBinary: tally, seconds: quick ? 3 : 10, appendRate: appends.value).run()
}
if enabled("feed") {
    let tally = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("tally").path
    results += try await ChangeFeedBenchmarks(workDirectory: workDirectory, tallyBinary: tally, events: quick ? 100_000 : 1_000_000).run()
}
if enabled("kit") {
    let tally = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("tally").path
    results += try await KitBenchmarks(workDirectory: workDirectory, tallyBinary: tally, events: quick ? 20_000 : 100_000, writes: quick ? 50 : 300).run()
}
if only.contains("reopen") || only.contains("hosting") {
    results += try await ReopenBenchmarks(workDirectory: workDirectory, samples: quick ? 200 : 1_000).run()
}
// Only when named (`scripts/bench hosting`): it makes 10,000 ledgers and loads three servers for a minute each.
if only.contains("hosting") {
    let tally = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("tally").path
    results += try await HostingBenchmarks(workDirectory: workDirectory, tallyBinary: tally, ledgers: quick ? 1_000 : 10_000, seconds: quick ? 10 : 60).run()
}
// Only when named (`scripts/bench cluster`, which starts a PostgreSQL and names it in TALLY_BENCH_POSTGRES).
if only.contains("cluster") {
    let tally = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("tally").path
    guard let postgres = ProcessInfo.processInfo.environment["TALLY_BENCH_POSTGRES"] else {
        throw BenchError("cluster needs TALLY_BENCH_POSTGRES (scripts/bench cluster starts one)")
    }
    results += try await ClusterBenchmarks(
        workDirectory: workDirectory, tallyBinary: tally, postgres: postgres, seconds: quick ? 10 : 30, kills: quick ? 5 : 20,
        catchUpEvents: quick ? 100_000 : 1_000_000
    ).run()
}
try? FileManager.default.removeItem(atPath: workDirectory)

for result in results { print(result.humanLine) }
print("")
for result in results { print(result.jsonLine) }
