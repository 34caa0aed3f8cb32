import ArgumentParser
import Foundation
import Logging
import PostgresNIO
import TallyCluster
import TallyCore

/// `tally cluster`: what an operator asks of a cluster of nodes on PostgreSQL (issue 32).
struct ClusterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster", abstract: "Look at a cluster of 'tally serve --ledgers … --cluster …' nodes.", subcommands: [Status.self])

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The nodes (last seen), each ledger's lease (owner, epoch, live) and the attachments archived for it.")
        @Option(help: "The cluster's PostgreSQL (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE).") var cluster: String
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let (nodes, leases, ledgers, blobs) = try await ClusterCommand.withArchive(cluster) { archive in
                (try await archive.nodes(), try await archive.leases(), try await archive.ledgers(), try await archive.blobUsage())
            }
            let held = Dictionary(leases.map { ($0.ledger, $0) }, uniquingKeysWith: { first, _ in first })
            if json {
                print(
                    JSONText.object([
                        (
                            "nodes",
                            .array(
                                nodes.map {
                                    .object([
                                        ("node", .string($0.node)), ("url", .string($0.url)), ("secondsSinceSeen", .int(Int64($0.secondsSinceSeen.rounded()))),
                                    ])
                                })
                        ),
                        (
                            "ledgers",
                            .array(
                                ledgers.map { name in
                                    .object([
                                        ("ledger", .string(name)), ("owner", held[name].map { .string($0.owner) } ?? .null),
                                        ("epoch", .int(held[name]?.epoch ?? 0)), ("live", .bool(held[name]?.live ?? false)),
                                        ("blobs", .int(Int64(blobs[name]?.count ?? 0))), ("blobBytes", .int(blobs[name]?.bytes ?? 0)),
                                    ])
                                })
                        ),
                    ]).serialized)
                return
            }
            print(Table.render(header: ["NODE", "URL", "SEEN"], rows: nodes.map { [$0.node, $0.url, "\(Int($0.secondsSinceSeen.rounded())) s ago"] }))
            print()
            print(
                Table.render(
                    header: ["LEDGER", "OWNER", "EPOCH", "LEASE", "BLOBS", "BLOB BYTES"],
                    rows: ledgers.map { name in
                        [
                            name, held[name]?.owner ?? "-", held[name].map { "\($0.epoch)" } ?? "-", held[name]?.live == true ? "live" : "free",
                            "\(blobs[name]?.count ?? 0)", "\(blobs[name]?.bytes ?? 0)",
                        ]
                    }))
        }
    }

    /// Runs `body` with the cluster at `url` (its tables made if missing), the client running meanwhile.
    static func withArchive<Result: Sendable>(_ url: String, _ body: @Sendable (ClusterArchive) async throws -> Result) async throws -> Result {
        let configuration: PostgresClient.Configuration
        do { configuration = try PostgresURL.configuration(url) } catch { throw CLIError("invalid --cluster: \(error)") }
        let logger = Logger(label: "tally") { StreamLogHandler.standardError(label: $0) }
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            // The client warns of a query made before it runs: give its run a moment to start.
            try await Task.sleep(for: .milliseconds(20))
            let archive = ClusterArchive(client: client, node: "tally-cli", logger: logger)
            do {
                try await archive.migrate()
            } catch {
                throw CLIError("the cluster's PostgreSQL at \(url) does not answer: \(String(reflecting: error).prefix(300))")
            }
            return try await body(archive)
        }
    }
}
