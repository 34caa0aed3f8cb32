import AsyncHTTPClient
import Foundation
import TallyCore
import TallyLog
import TallyStore
import TallySync

/// The replication benchmarks of issue 4, end to end (the receiver's views are projected when
/// the clock stops), each beside a baseline from the same run: copying the same segment bytes
/// from one folder to another and fsyncing them, which is what shipping costs at the least.
struct SyncBenchmarks {
    let workDirectory: String
    let tallyBinary: String
    /// Events shipped (the synthetic ledger: 200k expenses each created and updated 4×, at 1 M).
    let events: Int
    /// Events on each side of the merge benchmark, and the expenses both sides edit.
    let mergeEvents: Int
    let mergeExpenses: Int

    func run() async throws -> [BenchmarkResult] {
        let source = try freshDirectory("ship-source")
        let writer = try source.openWriter()
        _ = try writer.appendBulk(SyntheticLedger.drafts(count: events))
        writer.close()
        let copyRate = try copyRate(of: source)
        return [
            BenchmarkResult(
                name: "ship_files", value: try shipByFiles(from: source), unit: "events/s", baseline: copyRate,
                baselineName: "copy + fsync of the same segment bytes, events/s"),
            BenchmarkResult(
                name: "ship_http", value: try await shipOverHTTP(from: source), unit: "events/s", baseline: copyRate,
                baselineName: "copy + fsync of the same segment bytes, events/s"),
        ] + (try await catchUpAndMerge(from: source))
    }

    /// `catch_up_1m`, then `merge_two_replicas` against the same first load.
    func catchUpAndMerge(from source: DataDirectory) async throws -> [BenchmarkResult] {
        let (caughtUp, firstLoad) = try await catchUp(from: source)
        return [caughtUp, try merge(firstLoad: firstLoad)]
    }

    /// `merge_two_replicas` alone (`tally-bench merge`), against a first load of as many
    /// synthetic ledger events.
    func mergeAlone() throws -> BenchmarkResult {
        let synthetic = try freshDirectory("merge-first-load")
        let writer = try synthetic.openWriter()
        _ = try writer.appendBulk(SyntheticLedger.drafts(count: mergeEvents))
        writer.close()
        return try merge(firstLoad: try firstLoadRate(of: synthetic))
    }

    /// `catch_up_1m`: a replica that already holds events of its own (so it cannot simply
    /// adopt the peer's segment files, as an empty one does) receives every event of the
    /// source from `tally serve` over loopback (`tally sync`: verified, appended, projected).
    /// Baseline: a first load of the target's log afterwards (the same events, fresh views),
    /// which `merge_two_replicas` is measured against too.
    func catchUp(from source: DataDirectory) async throws -> (BenchmarkResult, firstLoad: Double) {
        let target = try freshDirectory("catch-up-target")
        let writer = try target.openWriter()
        _ = try writer.append(SyntheticLedger.drafts(count: 10))
        writer.close()
        try Projector(directory: target).catchUp()
        let rate = Double(events) / (try await timedSync(tallyBinary, from: source.path, into: target.path, port: 18993))
        try check(target, holds: events + 10)
        let firstLoad = try firstLoadRate(of: target)
        print(String(format: "catch_up_1m: %.2f s for %d events; first load of the same log %.0f events/s", Double(events) / rate, events, firstLoad))
        return (
            BenchmarkResult(
                name: "catch_up_1m", value: rate, unit: "events/s", baseline: firstLoad, baselineName: "first load of the same log, events/s"),
            firstLoad
        )
    }

    /// Export → import → projected, 1 M events into an empty replica.
    func shipByFiles(from source: DataDirectory) throws -> Double {
        let bundle = workDirectory + "/ship-bundle"
        try? FileManager.default.removeItem(atPath: bundle)
        let target = try freshDirectory("ship-files-target")
        let start = now()
        let manifest = try SegmentBundle.export(source, to: bundle, for: nil)
        let exported = now()
        try importAndProject(bundle, into: target)
        let rate = Double(manifest.events) / (now() - start)
        print(String(format: "ship_files: export %.2f s, import + projection %.2f s", exported - start, now() - exported))
        try check(target, holds: manifest.events)
        return rate
    }

    /// `tally sync` of an empty replica against `tally serve` on the source, over loopback.
    func shipOverHTTP(from source: DataDirectory) async throws -> Double {
        let target = workDirectory + "/ship-http-target"
        try? FileManager.default.removeItem(atPath: target)
        _ = try runProcess([tallyBinary, "init", "--data-dir", target])
        let rate = Double(events) / (try await timedSync(tallyBinary, from: source.path, into: target, port: 18992))
        try check(try DataDirectory(path: target), holds: events)
        return rate
    }

    /// Two replicas share `mergeExpenses` expenses, then each makes the rest of its
    /// `mergeEvents` events by editing those same expenses (so every property both edit is a
    /// conflict); timed: the bundles exchanged both ways, imported and projected. Baseline:
    /// `firstLoad`, a first load of synthetic ledger events (what the goal names).
    func merge(firstLoad: Double) throws -> BenchmarkResult {
        let left = try freshDirectory("merge-left"), right = try freshDirectory("merge-right")
        let ids = (0..<mergeExpenses).map { _ in UUID() }
        var writer = try left.openWriter()
        _ = try writer.appendBulk(
            ids.enumerated().map { index, id in
                EventDraft(
                    entityType: .expense, entityID: .uuid(id), operation: .create,
                    properties: [
                        .kind: .string("expense"), .amount: .int(Int64(1_000 + index)), .currency: .string("KRW"),
                        .date: .dateTime(DateTime(epochMillis: 1_704_067_200_000 + Int64(index % 365) * 86_400_000, offsetMinutes: 540)),
                        .memo: .string("shared \(index)"), .repeat: .string("none"),
                    ], actor: "bench:left")
            })
        writer.close()
        try importAndProject(try exportBundle(left, "merge-base", for: nil), into: right)
        for (side, name) in [(left, "left"), (right, "right")] {
            let writer = try side.openWriter()
            var drafts: [EventDraft] = []
            for step in 0..<(mergeEvents - mergeExpenses) {
                drafts.append(
                    EventDraft(
                        entityType: .expense, entityID: .uuid(ids[step % ids.count]), operation: .update,
                        properties: [.amount: .int(Int64(step + 1)), .memo: .string("\(name) edit \(step)")], actor: "bench:\(name)"))
            }
            _ = try writer.appendBulk(drafts)
            writer.close()
            try Projector(directory: side).catchUp()
        }
        let copyRate = try copyRate(of: left)
        writer = try left.openWriter()
        let leftVector = VersionVector(head: writer.head, excluding: left.identity.localOnlyOrigin)
        writer.close()
        let rightWriter = try right.openWriter()
        let rightVector = VersionVector(head: rightWriter.head, excluding: right.identity.localOnlyOrigin)
        rightWriter.close()

        let start = now()
        let toRight = try exportBundle(left, "merge-to-right", for: rightVector)
        let toLeft = try exportBundle(right, "merge-to-left", for: leftVector)
        try importAndProject(toRight, into: right)
        try importAndProject(toLeft, into: left)
        let merged = 2 * (mergeEvents - mergeExpenses)
        let rate = Double(merged) / (now() - start)

        let sums = try [left, right].map { side in try Projector(directory: side).database.read { try ViewChecksum.compute($0) } }
        // The conflict journal records what each replica observed, so it differs by design (docs/MERGE.md).
        let differences = sums[0].differences(from: sums[1]).filter { !$0.hasPrefix("conflicts") }
        guard differences.isEmpty else { throw BenchError("merged replicas differ: \(differences)") }
        let conflicts = try Projector(directory: left).database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM conflicts") ?? 0 }
        let rightConflicts = try Projector(directory: right).database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM conflicts") ?? 0 }
        print(
            "merge: \(merged) events exchanged, \(conflicts) conflicts journaled on the left and \(rightConflicts) on the right (it receives the older edits: each loses to a newer one), views identical; copy + fsync of one side's segment bytes \(Int(copyRate)) events/s"
        )
        return BenchmarkResult(
            name: "merge_two_replicas", value: rate, unit: "events/s", baseline: firstLoad,
            baselineName: "first load of synthetic ledger events, events/s")
    }

    func exportBundle(_ directory: DataDirectory, _ name: String, for vector: VersionVector?) throws -> String {
        let bundle = workDirectory + "/" + name
        try? FileManager.default.removeItem(atPath: bundle)
        _ = try SegmentBundle.export(directory, to: bundle, for: vector)
        return bundle
    }

    func importAndProject(_ bundle: String, into target: DataDirectory) throws {
        let writer = try target.openWriter()
        let start = now()
        var report = try SegmentBundle.importBundle(from: bundle, into: writer, maximumSkewMillis: 300_000)
        let last = writer.head.lastIndex
        writer.close()
        let imported = now()
        // As `Ledger.importBundle` projects a delivery.
        if let folded = report.folded.take() {
            try Projector(directory: target).catchUp(startingFrom: folded)
        } else {
            try Projector(directory: target).catchUpInBulk(through: last)
        }
        print(String(format: "  import %.2f s, projection %.2f s", imported - start, now() - imported))
    }

    /// Events per second of copying the directory's segment files into a fresh folder and fsyncing them.
    func copyRate(of directory: DataDirectory) throws -> Double {
        let copy = workDirectory + "/copy"
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        let logPath = directory.path + "/log"
        let start = now()
        for name in try FileManager.default.contentsOfDirectory(atPath: logPath) where name.hasSuffix(".tseg") {
            let data = try Data(contentsOf: URL(fileURLWithPath: logPath + "/" + name))
            let fd = open(copy + "/" + name, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            _ = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            fsync(fd)
            close(fd)
        }
        let events = try directory.reader.statistics().events
        return Double(events) / (now() - start)
    }

    func check(_ target: DataDirectory, holds expected: Int) throws {
        let projected = try Projector(directory: target).checkpoint()
        guard projected == UInt64(expected) else { throw BenchError("target projected \(projected) of \(expected) events") }
    }

    func freshDirectory(_ name: String) throws -> DataDirectory { try freshBenchDirectory(name, in: workDirectory) }
}
