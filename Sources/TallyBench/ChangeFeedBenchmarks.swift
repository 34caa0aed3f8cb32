import AsyncHTTPClient
import Foundation
import NIOCore
import TallyLog
import TallyStore

/// Issue 20's `change_feed_catch_up`: a replica of `events` ledger events (`tally serve`,
/// release, its own process); one server-sent-events client reads `/v1/changes?after=0` until
/// it has every event. Baseline in the same run on the same log: `sequential_read` (reading,
/// checking, decompressing, decoding and hashing every event in-process). The views' snapshot
/// is taken before the server starts, as a running server would have taken it: else the
/// server's first snapshot (copying ~180 MB of views) runs during the measurement.
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
        _ = try runProcess([tallyBinary, "snapshots", "take", "--data-dir", directory.path])
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
        return [
            BenchmarkResult(
                name: "change_feed_catch_up", value: rate, unit: "events/s", baseline: readRate,
                baselineName: "sequential_read of the same log, events/s")
        ]
    }
}

/// Counts server-sent events by their `\nid: ` lines, across chunk boundaries. Jumps from one
/// newline to the next with `memchr`: looking at each of half a gigabyte's bytes in a loop
/// took as much of the two cores as the server's rendering.
struct EventCounter {
    private let pattern = Array("\nid: ".utf8)
    private var matched = 0  // bytes of `pattern` matched at the end of the previous chunk

    mutating func count(in bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        var found = 0, position = 0
        while position < bytes.count {
            if matched == 0 {
                guard let newline = memchr(base + position, Int32(UInt8(ascii: "\n")), bytes.count - position) else { return found }
                position = UnsafeRawPointer(newline) - base + 1
                matched = 1
                continue
            }
            let byte = bytes[position]
            position += 1
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
