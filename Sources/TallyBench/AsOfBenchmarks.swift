import Foundation
import TallyCore
import TallyLedger
import TallyLog

/// Reading the ledger as it was (issue 18): `summary --month --as-of` on a ledger of
/// `events` synthetic events, the views snapshotted as the service does by default
/// (`SnapshotPolicy()`: every 50,000 events; in --quick runs every 5,000). The as-of index and the month are drawn at random (seeded) for each
/// sample, so a sample applies anything from 0 to a whole interval of events on top of its
/// snapshot. Baseline in the same run: the same summaries on the live views.
struct AsOfBenchmarks {
    let workDirectory: String
    let events: Int
    let samples: Int

    func run() throws -> [BenchmarkResult] {
        let directory = try freshBenchDirectory("as-of", in: workDirectory)
        let drafts = SyntheticLedger.drafts(count: events)
        let policy = events >= 1_000_000 ? SnapshotPolicy() : SnapshotPolicy(every: UInt64(events / 20))
        let interval = Int(policy.every)
        let writer = try directory.openWriter()
        var views: LedgerViews?
        let built = Date()
        for start in stride(from: 0, to: events, by: interval) {
            _ = try writer.appendBulk(Array(drafts[start..<min(start + interval, events)]))
            views = try LedgerViews.open(directory)  // caught up with what was just appended
            try views!.takeSnapshot(policy)
        }
        writer.close()
        let ledger = views!
        let snapshots = ledger.snapshots()
        print(
            "as-of: \(events) events, \(snapshots.count) snapshots (\(snapshots.reduce(0) { $0 + $1.bytes } >> 20) MiB) built in \(String(format: "%.1f", Date().timeIntervalSince(built))) s"
        )

        var seed = UInt64(20_261_124)
        func next(_ range: ClosedRange<Int>) -> Int {  // a fixed sequence, run to run
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return range.lowerBound + Int((seed >> 33) % UInt64(range.count))
        }
        let months = (0..<36).map { String(format: "%04d-%02d", 2024 + $0 / 12, $0 % 12 + 1) }
        var live: [Double] = [], past: [Double] = []
        for _ in 0..<samples {
            let month = months[next(0...(months.count - 1))]
            let began = now()
            _ = try ledger.summary(month: month)
            live.append(now() - began)
        }
        for _ in 0..<samples {
            let month = months[next(0...(months.count - 1))]
            let index = UInt64(next(1...events))
            let began = now()
            _ = try ledger.asOf(.index(index), warn: { print("warning: \($0)") }).summary(month: month)
            past.append(now() - began)
        }
        // ASOF_TRACE=1: the cost by distance from a snapshot (BENCHMARKS.md "Where the time goes").
        if ProcessInfo.processInfo.environment["ASOF_TRACE"] != nil {
            for offset in [0, 1, interval / 10, interval / 2, interval - 1] {
                let index = UInt64(10 * interval + offset)
                let began = now()
                _ = try ledger.asOf(.index(index), warn: { _ in }).summary(month: "2025-01")
                print("as-of trace: snapshot + \(offset) events: \(String(format: "%.1f", (now() - began) * 1000)) ms")
            }
        }
        let (liveP50, pastP50) = (quantile(live, 0.5) * 1000, quantile(past, 0.5) * 1000)
        print(String(format: "as-of: summary p50 %.1f ms (p90 %.1f ms) as of a random index; live p50 %.2f ms", pastP50, quantile(past, 0.9) * 1000, liveP50))
        return [
            BenchmarkResult(
                name: "asof_summary_p50", value: pastP50, unit: "ms", baseline: liveP50,
                baselineName: "the same summary on the live views, p50 (ms)")
        ]
    }
}
