import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PostgresNIO
import TallyCluster
import TallyCore
import TallyLog
import TallyServer
import TallyTestSupport

/// `scripts/bench cluster` (issue 32): three `tally serve --ledgers … --cluster` nodes on one
/// PostgreSQL (`scripts/bench` starts a throw-away one on loopback and names it in
/// `TALLY_BENCH_POSTGRES`), against one hosted node without a cluster in the same run (the
/// loads run in `rounds` slices each, interleaved, the single node and the three cluster nodes
/// up at once, so that each ratio's two sides meet the same neighbours):
///
/// - creates through the three nodes (64 writers, 100 ledgers, Zipf-picked, each request to a
///   node picked at random: most are forwarded to the ledger's owner), against the same load
///   on one hosted node (goal: ratio ≥ 0.5); and the same load with each request sent to the
///   ledger's owner (`cluster_creates_to_owner`: the cluster without forwards);
/// - one writer's create latency, p50, through the ledger's owner, against the same on one
///   hosted node (the archive's overhead; goal: ratio ≤ 2);
/// - catching a ledger up from PostgreSQL into an empty folder (events/s; goal ≥ 100,000),
///   against verifying the same log from disk (what the catch-up ends with);
/// - failover: the owner of a written ledger killed, the time until a write through another
///   node succeeds (p50 and worst, against the lease's length).
struct ClusterBenchmarks {
    let workDirectory: String
    let tallyBinary: String
    let postgres: String
    let seconds: Double
    let kills: Int
    let catchUpEvents: Int
    let writers = 64
    let ledgerCount = 100
    let leaseSeconds = 3
    /// The loads are measured in this many slices each, interleaved.
    let rounds = 3

    func run() async throws -> [BenchmarkResult] {
        let root = workDirectory + "/cluster"
        try? FileManager.default.removeItem(atPath: root)
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: writers)))
        let prefix = "b" + UUID().uuidString.lowercased().prefix(6)

        progress("one hosted node without a cluster")
        // One hosted node, no cluster: the baseline.
        let hosting = HostingBenchmarks(workDirectory: workDirectory, tallyBinary: tallyBinary, ledgers: ledgerCount, seconds: seconds)
        let local = try hosting.makeLedgers(LedgerFolder(root: root + "/single"), count: ledgerCount)
        let single = try startProcess([tallyBinary, "serve", "--ledgers", root + "/single", "--port", "18990", "--max-connections", "500"])
        try await waitForHealth("http://127.0.0.1:18990/health")
        for ledger in local { try await hosting.warm(client, "http://127.0.0.1:18990/v1/ledgers/\(ledger.name)/expenses", ledger.token) }
        let zipf = Zipf(count: ledgerCount, exponent: 1.1)

        progress("registering \(ledgerCount) ledgers in the cluster")
        // The same ledgers' names registered in the cluster, three nodes.
        var made: [String] = []
        for index in 0..<ledgerCount {
            let output = try runProcess([
                tallyBinary, "ledgers", "create", "\(prefix)-\(index)", "--ledgers", root + "/staging", "--cluster", postgres, "--token", "bench",
            ])
            guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("Token bench: ") }) else { throw BenchError("no token: \(output)") }
            made.append(String(line.dropFirst("Token bench: ".count)))
        }
        let tokens = made
        let ports = [18991, 18992, 18993]
        var nodes = try ports.map { try startNode(port: $0, root: root, prefix: prefix) }
        for port in ports { try await waitForHealth("http://127.0.0.1:\(port)/health") }
        progress("three nodes")
        // Spread the ledgers over the nodes (each opened by the node first asked).
        for index in 0..<ledgerCount {
            try await hosting.warm(client, "http://127.0.0.1:\(ports[index % 3])/v1/ledgers/\(prefix)-\(index)/expenses", tokens[index])
        }

        // The loads, interleaved: `rounds` slices of each in turn, so that the machine's
        // neighbours weigh on the baseline and the cluster alike (measured one after the other,
        // the single node's rate alone swung from 2,552 to 4,166 req/s between runs). The idle
        // side meanwhile only renews its leases (the cluster's: one statement a second per node).
        let slice = seconds / Double(rounds)
        var alone = Throughput(), clustered = Throughput(), direct = Throughput()
        var aloneOne: [Double] = [], clusteredOne: [Double] = []
        for round in 0..<rounds {
            progress("loads, round \(round + 1) of \(rounds)")
            alone.add(
                try await loadCreates(client, writers: writers, seconds: slice) { random in
                    let ledger = local[zipf.sample(&random)]
                    return ("http://127.0.0.1:18990/v1/ledgers/\(ledger.name)/expenses", ledger.token)
                }, over: slice)
            // Each request to a node picked at random: most are forwarded to the ledger's owner.
            clustered.add(
                try await loadCreates(client, writers: writers, seconds: slice) { random in
                    let index = zipf.sample(&random)
                    let port = ports[Int(random.next() % 3)]
                    return ("http://127.0.0.1:\(port)/v1/ledgers/\(prefix)-\(index)/expenses", tokens[index])
                }, over: slice)
            // The same load, each request sent to the ledger's owner (as PostgreSQL has it now): what
            // the cluster serves without forwarding, the bound for the load above.
            let owners = try await withArchive { [ledgerCount] archive in
                var owners: [Int] = []
                for index in 0..<ledgerCount {
                    owners.append(try await servingPort(of: "\(prefix)-\(index)", ports: ports, prefix: prefix, archive) ?? ports[index % 3])
                }
                return owners
            }
            direct.add(
                try await loadCreates(client, writers: writers, seconds: slice) { random in
                    let index = zipf.sample(&random)
                    return ("http://127.0.0.1:\(owners[index])/v1/ledgers/\(prefix)-\(index)/expenses", tokens[index])
                }, over: slice)
            // One writer, on one ledger of the single node, and through the owner of ledger 0.
            aloneOne += try await loadCreates(client, writers: 1, seconds: slice) { _ in
                ("http://127.0.0.1:18990/v1/ledgers/\(local[0].name)/expenses", local[0].token)
            }.latencies
            clusteredOne += try await loadCreates(client, writers: 1, seconds: slice) { _ in
                ("http://127.0.0.1:\(owners[0])/v1/ledgers/\(prefix)-0/expenses", tokens[0])
            }.latencies
        }
        single.terminate()
        single.waitUntilExit()

        progress("failover, \(kills) kills")
        // Failover: kill the owner of ledger 0 (after a write, so that some node holds it; which
        // one, PostgreSQL says — a lease can have moved under load), then write through another.
        var failovers: [Double] = []
        for kill in 0..<kills {
            // A node restarted a moment ago, or a lease on its way to another node, answers 503
            // for a moment: written once it is through.
            var status = try await create(client, port: ports[kill % 3], ledger: "\(prefix)-0", token: tokens[0])
            let asked = now()
            while status != 201, now() - asked < 30 {
                try await Task.sleep(for: .milliseconds(100))
                status = try await create(client, port: ports[kill % 3], ledger: "\(prefix)-0", token: tokens[0])
            }
            let serving = try await withArchive { try await $0.servingNode(of: "\(prefix)-0") }
            guard status == 201, let serving, let owner = ports.firstIndex(where: { "\(prefix)-\($0)" == serving.node }) else {
                throw BenchError("after a write through node \(kill % 3) (\(status)), no node of this run holds ledger 0: \(String(describing: serving))")
            }
            let survivor = (owner + 1) % 3
            Foundation.kill(nodes[owner].processIdentifier, SIGKILL)
            nodes[owner].waitUntilExit()
            let killed = now()
            var written = false
            while !written, now() - killed < 60 {
                written = (try? await create(client, port: ports[survivor], ledger: "\(prefix)-0", token: tokens[0])) == 201
                if !written { try await Task.sleep(for: .milliseconds(50)) }
            }
            guard written else { throw BenchError("no write through node \(survivor) within 60 s of killing node \(owner)") }
            failovers.append(now() - killed)
            nodes[owner] = try startNode(port: ports[owner], root: root, prefix: prefix)
            try await waitForHealth("http://127.0.0.1:\(ports[owner])/health")
        }
        for node in nodes {
            node.terminate()
            node.waitUntilExit()
        }

        try await client.shutdown()
        progress("catching up \(catchUpEvents) events")
        let (catchUpRate, verifyRate) = try await catchUp(root: root, ledger: "\(prefix)-catchup")
        try? FileManager.default.removeItem(atPath: root)
        return [
            BenchmarkResult(
                name: "cluster_creates", value: clustered.rate, unit: "req/s", baseline: alone.rate,
                baselineName: "one hosted node without a cluster, same 64 writers and 100 ledgers (goal: ratio >= 0.5)"),
            BenchmarkResult(
                name: "cluster_creates_to_owner", value: direct.rate, unit: "req/s", baseline: alone.rate,
                baselineName: "one hosted node without a cluster (each request sent to the ledger's owner: the load above without forwards)"),
            BenchmarkResult(
                name: "cluster_create_p50", value: quantile(clusteredOne, 0.5) * 1000, unit: "ms",
                baseline: quantile(aloneOne, 0.5) * 1000, baselineName: "one writer on one hosted node without a cluster (goal: ratio <= 2)"),
            BenchmarkResult(
                name: "cluster_catchup", value: catchUpRate, unit: "events/s", baseline: verifyRate,
                baselineName: "verifying the same log from disk (goal: value >= 100000)"),
            BenchmarkResult(
                name: "cluster_failover_p50", value: quantile(failovers, 0.5), unit: "s", baseline: Double(leaseSeconds),
                baselineName: "the lease's length (\(kills) kills; goal: p99 <= 15 s)"),
            BenchmarkResult(
                name: "cluster_failover_max", value: failovers.max() ?? 0, unit: "s", baseline: Double(leaseSeconds),
                baselineName: "the lease's length (\(kills) kills; goal: <= 15 s)"),
        ]
    }

    func progress(_ text: String) { FileHandle.standardError.write(Data("cluster: \(text)\n".utf8)) }

    func startNode(port: Int, root: String, prefix: String) throws -> Process {
        try startProcess([
            tallyBinary, "serve", "--ledgers", root + "/node-\(port)", "--port", "\(port)", "--max-connections", "500", "--cluster", postgres, "--node",
            "\(prefix)-\(port)", "--lease-seconds", "\(leaseSeconds)",
        ])
    }

    func create(_ client: HTTPClient, port: Int, ledger: String, token: String) async throws -> UInt {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/ledgers/\(ledger)/expenses")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: #"{"amount": 1, "memo": "failover"}"#))
        let response = try await client.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        return response.status.code
    }

    /// `body` with the cluster's archive (a client of its own, closed after).
    func withArchive<Value: Sendable>(_ body: @escaping @Sendable (ClusterArchive) async throws -> Value) async throws -> Value {
        let client = PostgresClient(configuration: try PostgresURL.configuration(postgres))
        let logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(ClusterArchive(client: client, node: "bench", logger: logger))
        }
    }

    /// The port of the node that holds `ledger`'s live lease (nil: none does).
    func servingPort(of ledger: String, ports: [Int], prefix: String, _ archive: ClusterArchive) async throws -> Int? {
        guard let node = try await archive.servingNode(of: ledger)?.node else { return nil }
        return ports.first { "\(prefix)-\($0)" == node }
    }

    /// Requests served and the seconds they took, over several loads.
    struct Throughput {
        var requests = 0
        var seconds = 0.0
        var rate: Double { Double(requests) / seconds }

        /// A load that ran for `slice` seconds.
        mutating func add(_ load: (rate: Double, latencies: [Double]), over slice: Double) {
            requests += load.latencies.count
            seconds += load.latencies.isEmpty ? slice : Double(load.latencies.count) / load.rate
        }
    }

    /// A ledger of `catchUpEvents` events archived through a writer (in bulk appends), then
    /// caught up into an empty folder: events per second, and the rate of verifying that log.
    func catchUp(root: String, ledger: String) async throws -> (Double, Double) {
        let (written, copy, keys) = (root + "/catchup-written", root + "/catchup-copy", root + "/catchup-keys")
        for folder in [written, copy, keys] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        let events = catchUpEvents
        return try await withArchive { archive in
            try await archive.migrate()
            let lease = try await archive.takeLease(ledger, localEnd: nil, for: .seconds(600))
            try await Task.detached {  // the writer blocks on PostgreSQL: not on a cooperative thread
                var configuration = LogConfiguration()
                configuration.archive = LeasedArchive(archive, lease: lease)
                let writer = try LogWriter(
                    directory: written, localOrigin: ReplicaID.random(), localOnlyOrigin: ReplicaID.random(), configuration: configuration,
                    signingKeyPath: keys + "/replica.key")
                for start in stride(from: 0, to: events, by: 10_000) {
                    _ = try writer.appendBulk((start..<min(start + 10_000, events)).map { SampleEvents.expenseCreate(amount: Int64($0 + 1)) })
                }
                writer.close()
            }.value
            let began = now()
            let report = try await ClusterCatchUp(archive: archive) { work in try await Task.detached { try work() }.value }
                .catchUp(ledger, logDirectory: copy)
            let catchUpSeconds = now() - began
            guard report.end == (try await archive.end(of: ledger)) else { throw BenchError("the catch-up did not reach the archive's end") }
            let verifyStart = now()
            let verified = try LogVerifier.verify(directory: written)
            guard verified.findings.isEmpty else { throw BenchError("the log written does not verify: \(verified.findings[0])") }
            return (Double(events) / catchUpSeconds, Double(verified.events) / (now() - verifyStart))
        }
    }
}
