import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import TallyServer
import TallyTestSupport

extension HostingBenchmarks {
    /// Issue 31's second half: ten change feeds on each of `ledgers` (10,000 over 1,000 at full
    /// size) held by one server, then writes to ledgers picked at random, twenty a second; for
    /// each write, how long until each stream of its ledger has it (from the write's request
    /// being sent). Baseline: the same writes' own latency. Also the resident memory each idle
    /// stream adds (RSS with the streams open and quiet, less RSS with every ledger open and
    /// none streaming, over the streams).
    ///
    /// As many ledgers as the descriptor limit lets a server hold with ten streams each
    /// (`DescriptorBudget`: `tally serve` refuses more): 10,000 streams need a limit of ~40,000.
    func streams(_ all: [Ledger], folder: String, client: HTTPClient) async throws -> [BenchmarkResult] {
        let perLedger = 10
        let budget = DescriptorBudget.raised()
        var fitting =
            (budget.limit - DescriptorBudget.reserve - 500 * DescriptorBudget.perConnection)
            / (perLedger * DescriptorBudget.perConnection + DescriptorBudget.perOpenLedger)
        while fitting > 1, (try? budget.check(maxConnections: fitting * perLedger + 500, maxOpenLedgers: fitting)) == nil { fitting -= 1 }
        let ledgers = Array(all.prefix(fitting))
        let port: UInt16 = 18998
        let server = try startProcess([
            tallyBinary, "serve", "--ledgers", folder, "--port", String(port), "--max-connections", String(ledgers.count * perLedger + 500),
            "--max-open-ledgers", String(ledgers.count), "--max-streams-per-token", String(perLedger),
        ])
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        try await waitForHealth("http://127.0.0.1:\(port)/health")
        // Opened by a read, as before 4f209d3: each ledger's feeds then find its reader open,
        // and the memory a stream holds is measured against the same baseline as then.
        for ledger in ledgers { try await warm(client, "http://127.0.0.1:\(port)/v1/ledgers/\(ledger.name)/expenses", ledger.token, byReading: true) }
        try await Task.sleep(for: .seconds(1))
        let before = Self.held(by: server.processIdentifier)

        let clients = StreamClients()
        defer { clients.close() }
        for (index, ledger) in ledgers.enumerated() {
            for _ in 0..<perLedger {
                try clients.open(port: port, path: "/v1/ledgers/\(ledger.name)/changes", token: ledger.token, ledger: index)
            }
        }
        clients.start()
        let streams = ledgers.count * perLedger
        let openDeadline = now() + 120
        while clients.answered.load(ordering: .relaxed) < streams, now() < openDeadline { try await Task.sleep(for: .milliseconds(100)) }
        guard clients.answered.load(ordering: .relaxed) == streams else {
            throw BenchError("only \(clients.answered.load(ordering: .relaxed)) of \(streams) change feeds answered 200")
        }
        try await Task.sleep(for: .seconds(3))  // quiet: the streams idle
        let idle = Self.held(by: server.processIdentifier)

        // Writes, twenty a second, each to a ledger at random; a ledger's k-th write here is
        // the k-th event after the last its streams have had (its history, sent first).
        let history = clients.arrivals.withLock { arrivals in ledgers.indices.map { arrivals[$0]?.keys.max() ?? 0 } }
        let writes = Int(seconds) * 20
        var random = SplitMix64(seed: 31)
        var written = [Int](repeating: 0, count: ledgers.count)
        var sent: [(ledger: Int, id: UInt64, at: Double)] = []
        var writeLatencies: [Double] = []
        for _ in 0..<writes {
            let pick = Int(random.next() % UInt64(ledgers.count))
            let ledger = ledgers[pick]
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/ledgers/\(ledger.name)/expenses")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(ledger.token)")
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: #"{"amount": 1, "memo": "stream bench"}"#))
            let began = now()
            let response = try await client.execute(request, timeout: .seconds(60))
            _ = try await response.body.collect(upTo: 1 << 20)
            guard response.status.code == 201 else { throw BenchError("a write answered \(response.status.code)") }
            writeLatencies.append(now() - began)
            written[pick] += 1
            sent.append((pick, history[pick] + UInt64(written[pick]), began))
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .seconds(3))  // the last writes reach their streams

        let arrivals = clients.arrivals.withLock { $0 }
        var deliveries: [Double] = []
        var missing = 0
        for write in sent {
            let times = arrivals[write.ledger]?[write.id] ?? []
            missing += perLedger - times.count
            deliveries += times.map { $0 - write.at }
        }
        guard missing == 0 else { throw BenchError("\(missing) deliveries of \(writes * perLedger) never reached their stream") }
        let perStreamKiB = (idle.rssMiB - before.rssMiB) * 1024 / Double(streams)
        return [
            BenchmarkResult(
                name: "hosting_stream_delivery_p99", value: quantile(deliveries, 0.99) * 1000, unit: "ms",
                baseline: quantile(writeLatencies, 0.99) * 1000,
                baselineName:
                    "the writes' own p99, same run (goal: value <= 250 ms; \(streams) streams over \(ledgers.count) ledgers, what a descriptor limit of \(budget.limit) holds)"
            ),
            BenchmarkResult(
                name: "hosting_stream_rss", value: perStreamKiB, unit: "KiB/stream", baseline: before.rssMiB * 1024 / Double(ledgers.count),
                baselineName: "KiB per open ledger with no stream (RSS \(Int(before.rssMiB)) MiB before the streams, \(Int(idle.rssMiB)) MiB with them)"),
        ]
    }
}
