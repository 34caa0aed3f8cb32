import Foundation
import TallyCore
import TallyLog
import TallyStore
import TallySync

/// Tally's side of `scripts/bench-peers`: the workload `scripts/bench_peers.py` also runs
/// through the Python `eventsourcing` library — 20,000 expenses created, then each updated 4
/// times (100,000 events) — row for row. Each figure is printed as one JSON line prefixed
/// `peer-row ` for the script to pair with the peer's.
struct PeerBenchmarks {
    let workDirectory: String
    let expenses = 20_000
    let updates = 4
    let batch = 1_000

    func run() throws {
        let ids = (0..<expenses).map { _ in UUID() }
        let drafts = workload(ids)

        // 1. Appended in batches of 1,000 events, each batch durable.
        let batched = try freshDirectory("peer-batched")
        var writer = try batched.openWriter()
        var start = now()
        for first in stride(from: 0, to: drafts.count, by: batch) {
            _ = try writer.appendBulk(Array(drafts[first..<min(first + batch, drafts.count)]))
        }
        report("append_batched", Double(drafts.count) / (now() - start), "events/s")
        writer.close()

        // 2. One event per durable append (one aggregate's change at a time).
        let single = try freshDirectory("peer-single")
        writer = try single.openWriter()
        start = now()
        for draft in drafts { _ = try writer.append([draft]) }
        report("append_one_at_a_time", Double(drafts.count) / (now() - start), "events/s")
        writer.close()

        // 3. Every event read back in order (checked, decompressed, decoded).
        start = now()
        var read = 0
        try batched.reader.forEachEvent { _ in read += 1 }
        report("read_all_in_order", Double(read) / (now() - start), "events/s")

        // 4. The SQLite views built from the log into an empty database (Tally's views hold
        // more than the peer's one table: merge state per entity, four indexes, categories).
        start = now()
        try Projector(directory: batched).catchUp()
        report("rebuild_sqlite_view", Double(drafts.count) / (now() - start), "events/s")

        // 5. A follower pulling the leader's whole log (segments export → verified import).
        let follower = try freshDirectory("peer-follower")
        let bundle = workDirectory + "/peer-bundle"
        try? FileManager.default.removeItem(atPath: bundle)
        start = now()
        _ = try SegmentBundle.export(batched, to: bundle, for: nil)
        writer = try follower.openWriter()
        _ = try SegmentBundle.importBundle(from: bundle, into: writer, maximumSkewMillis: 300_000)
        writer.close()
        report("follower_pull", Double(drafts.count) / (now() - start), "events/s")

        // 6. Bytes on disk per event (segment files).
        report("bytes_per_event", Double(try batched.reader.statistics().storedBytes) / Double(drafts.count), "bytes")
    }

    /// Every expense created, then every expense updated, `updates` rounds.
    func workload(_ ids: [UUID]) -> [EventDraft] {
        var drafts: [EventDraft] = []
        for (index, id) in ids.enumerated() {
            drafts.append(
                EventDraft(
                    entityType: .expense, entityID: .uuid(id), operation: .create,
                    properties: [
                        .kind: .string("expense"), .amount: .int(Int64(1_000 + index)), .currency: .string("KRW"),
                        .date: .dateTime(DateTime(epochMillis: 1_704_067_200_000 + Int64(index % 365) * 86_400_000, offsetMinutes: 540)),
                        .memo: .string("lunch \(index % 31)"), .repeat: .string("none"),
                    ], actor: "bench"))
        }
        for round in 1...updates {
            for (index, id) in ids.enumerated() {
                drafts.append(
                    EventDraft(
                        entityType: .expense, entityID: .uuid(id), operation: .update,
                        properties: [.amount: .int(Int64(1_000 + index + round)), .memo: .string("edit \(round)")], actor: "bench"))
            }
        }
        return drafts
    }

    func report(_ name: String, _ value: Double, _ unit: String) {
        print("peer-row {\"bench\": \"\(name)\", \"value\": \(value), \"unit\": \"\(unit)\"}")
    }

    func freshDirectory(_ name: String) throws -> DataDirectory {
        let path = workDirectory + "/" + name
        try? FileManager.default.removeItem(atPath: path)
        return try DataDirectory.create(path: path, name: name)
    }
}
