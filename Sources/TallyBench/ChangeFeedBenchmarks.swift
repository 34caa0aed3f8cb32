import AsyncHTTPClient
import Foundation
import NIOCore
import TallyLog
import TallyStore

/// Issue 20's `change_feed_catch_up`: a replica of `events` ledger events (`tally serve`,
/// release, its own process); one server-sent-events client reads `/v1/changes?after=0` until
/// it has every event. Baseline in the same run on the same log: `sequential_read` (reading,
/// checking, decompressing, decoding and hashing every event in-process).
struct ChangeFeedBenchmarks {
    let workDirectory: String
    let tallyBinary: String
    let events: Int

    func run() async throws -> [BenchmarkResult] {
        let directory = try freshBenchDirectory("feed", in: workDirectory)
        let writer = try directory.openWriter()
        _ = try writer.appendBulk(LogBenchmarks.ledgerDrafts(events))
        writer.close()
        try Projector(directory: directory).catchUp()
        let token = try runProcess([tallyBinary, "token", "create", "--data-dir", directory.path, "--name", "bench", "--scope", "read"])
            .trimmingCharacters(in: .whitespacesAndNewlines)

        var count = 0
        let readStart = now()
        try directory.reader.forEachEvent { _ in count += 1 }
        let readRate = Double(count) / (now() - readStart)

        let server = try startProcess([tallyBinary, "serve", "--data-dir", directory.path, "--port", "18993"])
        defer { server.terminate() }
        try await waitForHealth("http://127.0.0.1:18993/health")
        var request = HTTPClientRequest(url: "http://127.0.0.1:18993/v1/changes?after=0")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let start = now()
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(600))
        guard response.status.code == 200 else { throw BenchError("/v1/changes answered \(response.status.code)") }
        var received = 0, bytes = 0
        var counter = EventCounter()
        for try await chunk in response.body {
            bytes += chunk.readableBytes
            received += chunk.withUnsafeReadableBytes { counter.count(in: $0) }
            if received >= events { break }
        }
        let rate = Double(received) / (now() - start)
        guard received == events else { throw BenchError("the feed sent \(received) of \(events) events") }
        print(String(format: "feed: %d events, %.1f MiB of server-sent events", received, Double(bytes) / 1_048_576))
        return [BenchmarkResult(name: "change_feed_catch_up", value: rate, unit: "events/s", baseline: readRate,
                                baselineName: "sequential_read of the same log, events/s")]
    }
}

/// Counts server-sent events by their `\nid: ` lines, across chunk boundaries.
struct EventCounter {
    private let pattern = Array("\nid: ".utf8)
    private var matched = 0  // bytes of `pattern` matched at the end of the previous chunk

    mutating func count(in bytes: UnsafeRawBufferPointer) -> Int {
        var found = 0
        for byte in bytes {
            if byte == pattern[matched] {
                matched += 1
                if matched == pattern.count { found += 1; matched = 0 }
            } else {
                matched = byte == pattern[0] ? 1 : 0
            }
        }
        return found
    }
}
