import ArgumentParser
import Foundation
import Logging
import PostgresNIO
import TallyCluster
import TallyCore
import TallyServer

/// `tally cluster`: what an operator asks of a cluster of nodes on PostgreSQL (issue 32).
struct ClusterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster", abstract: "Look at a cluster of 'tally serve --ledgers … --cluster …' nodes.", subcommands: [Status.self])

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "The nodes (last seen) and each ledger's lease (owner, epoch, live, expiry), archived log (bytes, last write), attachments and the operator's edits waiting for its owner."
        )
        @Option(help: "The cluster's PostgreSQL (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE).") var cluster: String
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let (nodes, leases, ledgers, archived, blobs, edits) = try await ClusterCommand.withArchive(cluster) { archive in
                (
                    try await archive.nodes(), try await archive.leases(), try await archive.ledgers(), try await archive.archiveUsage(),
                    try await archive.blobUsage(), try await archive.waitingEdits()
                )
            }
            // A lease nobody has held yet, or moved on by the CLI's edit of a ledger nobody served, has no owner.
            let held = Dictionary(leases.filter { !$0.owner.isEmpty }.map { ($0.ledger, $0) }, uniquingKeysWith: { first, _ in first })
            if json {
                let nodeItems: [JSONText] = nodes.map {
                    .object([("node", .string($0.node)), ("url", .string($0.url)), ("secondsSinceSeen", .int(Int64($0.secondsSinceSeen.rounded())))])
                }
                let ledgerItems: [JSONText] = ledgers.map { name in
                    let lease = held[name]
                    return .object([
                        ("ledger", .string(name)), ("owner", lease.map { .string($0.owner) } ?? .null), ("epoch", .int(lease?.epoch ?? 0)),
                        ("live", .bool(lease?.live ?? false)),
                        ("leaseExpiresInSeconds", lease.flatMap { $0.live ? .int(Int64($0.expiresIn.rounded())) : nil } ?? .null),
                        ("archivedBytes", .int(archived[name]?.bytes ?? 0)),
                        ("secondsSinceLastWrite", archived[name].map { .int(Int64($0.secondsSinceWrite.rounded())) } ?? .null),
                        ("blobs", .int(Int64(blobs[name]?.count ?? 0))), ("blobBytes", .int(blobs[name]?.bytes ?? 0)),
                        ("editsWaiting", .int(Int64(edits[name] ?? 0))),
                    ])
                }
                print(JSONText.object([("nodes", .array(nodeItems)), ("ledgers", .array(ledgerItems))]).serialized)
                return
            }
            print(Table.render(header: ["NODE", "URL", "SEEN"], rows: nodes.map { [$0.node, $0.url, "\(Int($0.secondsSinceSeen.rounded())) s ago"] }))
            print()
            let rows = ledgers.map { name in
                let lease = held[name]
                let state = lease.map { $0.live ? "live, \(Int($0.expiresIn.rounded())) s left" : "free" } ?? "free"
                return [
                    name, lease?.owner ?? "-", lease.map { "\($0.epoch)" } ?? "-", state, "\(archived[name]?.bytes ?? 0)",
                    archived[name].map { "\(Int($0.secondsSinceWrite.rounded())) s ago" } ?? "never", "\(blobs[name]?.count ?? 0)",
                    "\(blobs[name]?.bytes ?? 0)", "\(edits[name] ?? 0)",
                ]
            }
            print(
                Table.render(
                    header: ["LEDGER", "OWNER", "EPOCH", "LEASE", "LOG BYTES", "LAST WRITE", "BLOBS", "BLOB BYTES", "EDITS WAITING"], rows: rows))
        }
    }

    /// Runs `body` with the cluster at `url` (its tables made if missing), the client running meanwhile.
    static func withArchive<Result: Sendable>(_ url: String, _ body: @Sendable (ClusterArchive) async throws -> Result) async throws -> Result {
        let configuration: PostgresClient.Configuration
        do { configuration = try PostgresURL.configuration(url) } catch { throw CLIError("invalid --cluster: \(error)") }
        // The pool's own notes on each failed connection are not the operator's business: the
        // command says once, within 10 s, that PostgreSQL does not answer.
        var logger = Logger(label: "tally") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .error
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            // The client warns of a query made before it runs: give its run a moment to start.
            try await Task.sleep(for: .milliseconds(20))
            let archive = ClusterArchive(client: client, node: "tally-cli", logger: logger)
            do {
                try await answered("a first query", within: .seconds(10)) { try await archive.migrate() }
            } catch {
                throw CLIError("the cluster's PostgreSQL at \(url) does not answer: \(String(reflecting: error).prefix(300))")
            }
            return try await body(archive)
        }
    }
}

/// `--cluster URL --ledger NAME`: a change to the tokens, members or invitations of a hosted
/// ledger of a cluster, made through its PostgreSQL for whichever node serves it
/// (`CredentialEdit`), instead of to a data directory (`--data-dir`).
struct ClusterLedgerOptions: ParsableArguments {
    @Option(help: "Make the change to --ledger of the cluster on this PostgreSQL (postgres://…), for the node that serves it.")
    var cluster: String?
    @Option(help: "With --cluster: the hosted ledger.") var ledger: String?

    /// Runs `body` on the ledger's folder: with --cluster, on the files PostgreSQL holds (what
    /// its owner stored last); else on the data directory `global` names.
    func onFolder<Value: Sendable>(else global: GlobalOptions, _ body: @escaping @Sendable (String) throws -> Value) async throws -> Value {
        if let target = try target() { return try await target.withFiles(body) }
        return try body(try global.open().path)
    }

    /// The cluster and ledger named; nil without --cluster.
    func target() throws -> ClusterLedger? {
        guard let cluster else {
            if ledger != nil { throw CLIError("--ledger names a ledger of a cluster: give --cluster too (or --data-dir for a ledger's folder)") }
            return nil
        }
        guard let ledger else { throw CLIError("--cluster needs --ledger NAME") }
        return ClusterLedger(url: cluster, ledger: try LedgersCommand.name(ledger))
    }
}

/// A hosted ledger of the cluster on the PostgreSQL at `url`.
struct ClusterLedger {
    let url: String
    let ledger: LedgerName

    /// Runs `body` on a folder holding the ledger's files as PostgreSQL holds them (what its
    /// owner stored last): for listing its tokens and members.
    func withFiles<Value: Sendable>(_ body: @escaping @Sendable (String) throws -> Value) async throws -> Value {
        let ledger = ledger.text
        return try await ClusterCommand.withArchive(url) { archive in
            guard let files = try await archive.files(of: ledger) else { throw CLIError("no ledger named '\(ledger)' in the cluster") }
            return try LedgerFiles.inFolderOfTheirOwn(files, body).value
        }
    }

    /// Makes `edit` of the ledger; throws the refusal (or that no node answered in time).
    func make(_ edit: CredentialEdit) async throws {
        let ledger = ledger.text
        let refusal = try await ClusterCommand.withArchive(url) { archive in
            do { return try await archive.make(edit, of: ledger) } catch let refusal as ClusterRefusal { throw CLIError("\(refusal)") } catch let late
                as EditNotAnswered
            {
                throw CLIError("\(late)")
            }
        }
        if let refusal { throw CLIError(refusal) }
    }
}
