import Foundation
import TallyCore
import TallyLog
import TallyTestSupport

/// The log benchmarks of issue 2, each beside a baseline from the same run and the same disk.
struct LogBenchmarks {
    let workDirectory: String
    let bulkEvents: Int
    let latencySamples: Int

    /// A fresh log directory under the work directory.
    func freshLog(_ name: String) throws -> (LogWriter, String) {
        let path = workDirectory + "/" + name
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        var configuration = LogConfiguration()
        configuration.segmentSizeLimit = 64 << 20
        // Signed as a replica's writer signs (one signed head per durable batch).
        return (
            try LogWriter(
                directory: path, localOrigin: .random(), localOnlyOrigin: .random(), configuration: configuration,
                signingKeyPath: path + ".key"), path
        )
    }

    /// Realistic ledger traffic: each expense created, then updated four times.
    static func ledgerDrafts(_ count: Int) -> [EventDraft] {
        var drafts: [EventDraft] = []
        drafts.reserveCapacity(count)
        var ids: [UUID] = []
        let actors = ["cli:alice", "token:phone", "token:laptop"]
        for index in 0..<count {
            if index % 5 == 0 || ids.isEmpty {
                let id = UUID()
                ids.append(id)
                drafts.append(SampleEvents.expenseCreate(id: id, amount: Int64(1000 + index % 97 * 100), memo: "점심 \(index % 31)", actor: actors[index % 3]))
            } else {
                drafts.append(SampleEvents.expenseUpdate(id: ids[ids.count - 1], amount: Int64(1000 + index), actor: actors[index % 3]))
            }
        }
        return drafts
    }

    /// Durable single-writer latency against write+fdatasync of the same bytes on the same disk,
    /// alternating blocks of both so that neighbours' load hits them alike.
    func singleWriterLatency() throws -> [BenchmarkResult] {
        let (writer, path) = try freshLog("latency")
        defer { writer.close() }
        let draft = SampleEvents.expenseCreate()
        _ = try writer.append([draft])
        let frameSize = try LogReader(directory: path).statistics().storedBytes
        let rawPath = workDirectory + "/latency-raw.bin"
        let fd = open(rawPath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
        defer { close(fd); unlink(rawPath) }
        let payload = [UInt8](repeating: 0x5A, count: frameSize)
        var tally: [Double] = [], raw: [Double] = []
        let blocks = 10
        for _ in 0..<blocks {
            for _ in 0..<(latencySamples / blocks) {
                let start = now()
                _ = payload.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                fdatasync(fd)
                raw.append(now() - start)
            }
            for _ in 0..<(latencySamples / blocks) {
                let start = now()
                _ = try writer.append([draft])
                tally.append(now() - start)
            }
        }
        return [
            BenchmarkResult(
                name: "append_latency_p50", value: quantile(tally, 0.5) * 1e6, unit: "us", baseline: quantile(raw, 0.5) * 1e6,
                baselineName: "write+fdatasync \(frameSize) B p50"),
            BenchmarkResult(
                name: "append_latency_p99", value: quantile(tally, 0.99) * 1e6, unit: "us", baseline: quantile(raw, 0.99) * 1e6,
                baselineName: "write+fdatasync \(frameSize) B p99"),
        ]
    }

    /// 64 threads appending one event at a time (group commit) against one thread doing
    /// write+fdatasync per event on the same disk.
    func concurrentWriters(threads: Int = 64, seconds: Double = 2) throws -> BenchmarkResult {
        let (writer, _) = try freshLog("concurrent")
        defer { writer.close() }
        let rawPath = workDirectory + "/concurrent-raw.bin"
        let fd = open(rawPath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
        defer { close(fd); unlink(rawPath) }
        let payload = [UInt8](repeating: 0x5A, count: 200)
        var rawCount = 0
        let rawStart = now()
        while now() - rawStart < seconds {
            _ = payload.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            fdatasync(fd)
            rawCount += 1
        }
        let rawRate = Double(rawCount) / (now() - rawStart)

        let counter = Counter()
        let deadline = now() + seconds
        let group = DispatchGroup()
        let start = now()
        for _ in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                let draft = SampleEvents.expenseCreate()
                while now() < deadline {
                    if (try? writer.append([draft])) != nil { counter.increment() }
                }
                group.leave()
            }
        }
        group.wait()
        let rate = Double(counter.value) / (now() - start)
        return BenchmarkResult(name: "append_64_writers", value: rate, unit: "events/s", baseline: rawRate, baselineName: "1 thread write+fdatasync per event")
    }

    /// One million events in one append against writing their encoded bytes raw (1 MiB writes, one fdatasync).
    func bulkAppend(_ drafts: [EventDraft]) throws -> (BenchmarkResult, String) {
        let (writer, path) = try freshLog("bulk")
        let start = now()
        _ = try writer.appendBulk(drafts)
        let elapsed = now() - start
        writer.close()
        let stats = try LogReader(directory: path).statistics()
        let rawPath = workDirectory + "/bulk-raw.bin"
        let fd = open(rawPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        defer { close(fd); unlink(rawPath) }
        let chunk = [UInt8](repeating: 0x5A, count: 1 << 20)
        let rawStart = now()
        var remaining = stats.rawBytes
        while remaining > 0 {
            let size = min(remaining, chunk.count)
            _ = chunk.withUnsafeBytes { write(fd, $0.baseAddress, size) }
            remaining -= size
        }
        fdatasync(fd)
        let rawElapsed = now() - rawStart
        return (
            BenchmarkResult(
                name: "bulk_append", value: Double(drafts.count) / elapsed, unit: "events/s",
                baseline: Double(drafts.count) / rawElapsed, baselineName: "raw write of the encoded bytes"), path
        )
    }

    /// Bytes per event on disk against the same events as compact JSON lines.
    func bytesPerEvent(logPath: String) throws -> BenchmarkResult {
        let stats = try LogReader(directory: logPath).statistics()
        var jsonBytes = 0
        try LogReader(directory: logPath).forEachEvent { logged in
            jsonBytes += logged.event.json(index: logged.index, hash: logged.hash).serialized.utf8.count + 1
        }
        return BenchmarkResult(
            name: "bytes_per_event", value: Double(stats.bytesOnDisk) / Double(stats.events), unit: "bytes",
            baseline: Double(jsonBytes) / Double(stats.events), baselineName: "compact JSON line")
    }

    /// Reading and decoding every event against parsing the same events from JSON lines.
    func sequentialRead(logPath: String) throws -> BenchmarkResult {
        var count = 0
        var lines: [Data] = []
        try LogReader(directory: logPath).forEachEvent { logged in
            if lines.count < 200_000 { lines.append(Data(logged.event.json(index: logged.index, hash: logged.hash).serialized.utf8)) }
        }
        let start = now()
        try LogReader(directory: logPath).forEachEvent { _ in count += 1 }
        let rate = Double(count) / (now() - start)
        let jsonStart = now()
        for line in lines { _ = try JSONSerialization.jsonObject(with: line) }
        let jsonRate = Double(lines.count) / (now() - jsonStart)
        return BenchmarkResult(name: "sequential_read", value: rate, unit: "events/s", baseline: jsonRate, baselineName: "JSONSerialization of JSON lines")
    }
}

/// A thread-safe counter for the concurrent benchmark.
final class Counter: @unchecked Sendable {
    // @unchecked: `count` is only touched under `lock`.
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
