import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The HTTP benchmarks of issues 5 and 20: `tally serve` (release) in its own process, loaded
/// from this one over loopback with 64 concurrent connections for a bounded time; baselines from
/// the same run: a bare Hummingbird route returning a constant, served the same way, and (for
/// creates) 64 threads appending to a bare log (`append_64_writers`, measured just before).
struct HTTPBenchmarks {
    let workDirectory: String
    let tallyBinary: String
    let seconds: Double
    /// `append_64_writers` of the same run, events/s.
    let appendRate: Double

    func run() async throws -> [BenchmarkResult] {
        let data = workDirectory + "/http"
        try? FileManager.default.removeItem(atPath: data)
        _ = try runProcess([tallyBinary, "init", "--data-dir", data])
        let token = try runProcess([tallyBinary, "token", "create", "--data-dir", data, "--name", "bench", "--scope", "read,write"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let debug = URL(fileURLWithPath: tallyBinary).deletingLastPathComponent().appendingPathComponent("tally-debug").path  // built beside tally
        let bare = try startProcess([debug, "bare-server", "--port", "18990"])
        let server = try startProcess([tallyBinary, "serve", "--data-dir", data, "--port", "18991"])
        defer { bare.terminate(); server.terminate() }
        try await Task.sleep(for: .seconds(2))

        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)))
        let results = try await measure(client, token: token)
        try await client.shutdown()
        return results
    }

    func measure(_ client: HTTPClient, token: String) async throws -> [BenchmarkResult] {
        let seconds = self.seconds, appendRate = self.appendRate
        let baseline = try await load(client, connections: 64) { _ in ("http://127.0.0.1:18990/constant", .GET, nil) }
        let creates = try await load(client, connections: 64) { step in
            ("http://127.0.0.1:18991/v1/expenses", .POST, #"{"amount": \#(step + 1), "memo": "bench", "date": "2026-03-01"}"#)
        }
        let ids = try await listIDs(client, token: token)
        let gets = try await load(client, connections: 64) { step in ("http://127.0.0.1:18991/v1/expenses/\(ids[step % ids.count])", .GET, nil) }
        let lists = try await load(client, connections: 64) { _ in ("http://127.0.0.1:18991/v1/expenses?month=2026-03&limit=50", .GET, nil) }
        return [
            BenchmarkResult(name: "http_create_expense", value: creates.rate, unit: "req/s", baseline: appendRate, baselineName: "append_64_writers, events/s"),
            BenchmarkResult(
                name: "http_create_expense_vs_bare", value: creates.rate, unit: "req/s", baseline: baseline.rate,
                baselineName: "bare Hummingbird constant route"),
            BenchmarkResult(
                name: "http_create_expense_p99", value: creates.p99 * 1000, unit: "ms", baseline: baseline.p99 * 1000, baselineName: "bare route p99"),
            BenchmarkResult(name: "http_get_by_id", value: gets.rate, unit: "req/s", baseline: baseline.rate, baselineName: "bare Hummingbird constant route"),
            BenchmarkResult(
                name: "http_list_month", value: lists.rate, unit: "req/s", baseline: baseline.rate, baselineName: "bare Hummingbird constant route"),
        ]

        func load(_ client: HTTPClient, connections: Int, _ request: @escaping @Sendable (Int) -> (String, HTTPMethod, String?)) async throws -> (
            rate: Double, p99: Double
        ) {
            let deadline = now() + seconds
            let start = now()
            let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
                for worker in 0..<connections {
                    group.addTask {
                        var samples: [Double] = []
                        var step = worker * 1_000_000
                        while now() < deadline {
                            let (url, method, body) = request(step)
                            var http = HTTPClientRequest(url: url)
                            http.method = method
                            http.headers.add(name: "Authorization", value: "Bearer \(token)")
                            if let body {
                                http.headers.add(name: "Content-Type", value: "application/json")
                                http.body = .bytes(ByteBuffer(string: body))
                            }
                            let began = now()
                            let response = try await client.execute(http, timeout: .seconds(30))
                            _ = try await response.body.collect(upTo: 1 << 20)
                            guard response.status.code < 300 else { throw BenchError("\(url) answered \(response.status.code)") }
                            samples.append(now() - began)
                            step += 1
                        }
                        return samples
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            return (Double(latencies.count) / (now() - start), quantile(latencies, 0.99))
        }
    }

    func listIDs(_ client: HTTPClient, token: String) async throws -> [String] {
        var request = HTTPClientRequest(url: "http://127.0.0.1:18991/v1/expenses?limit=1000")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let body = try await client.execute(request, timeout: .seconds(30)).body.collect(upTo: 16 << 20)
        let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as! [String: Any]
        return (object["items"] as! [[String: Any]]).map { $0["id"] as! String }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
