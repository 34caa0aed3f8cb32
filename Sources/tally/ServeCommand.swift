import ArgumentParser
import Foundation
import Hummingbird
import Logging
import PostgresNIO
import TallyCluster
import TallyCore
import TallyImages
import TallyLedger
import TallyLog
import TallyServer
import TallyStore

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the HTTP service on this replica (stops gracefully on SIGTERM or SIGINT).")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on.") var port = 8080
    @Option(help: "Seconds between syncs with the configured peers.") var syncInterval = 30
    @Option(help: "Change feeds (/v1/changes) one token may hold open at once; more get 429.") var maxStreamsPerToken = 4
    @Option(help: "The largest attachment, in MiB (413 beyond, checked as it arrives).") var maxAttachmentMib = 25
    @Option(help: "The most all attachments may hold together, in MiB (507 beyond).") var attachmentQuotaMib = 10_240
    @Flag(help: "Take attachments of any type, not only JPEG, PNG, HEIC/HEIF, WebP, GIF and PDF.") var allowAnyAttachmentType = false
    @Option(help: "The most memory one thumbnail's decode may need, in MiB, by its header's estimate (422 beyond).") var thumbnailDecodeMib =
        ThumbnailLimits().maxDecodeBytes >> 20
    @Option(help: "Thumbnails decoded at once; more wait in line (see docs/SECURITY.md for the memory bound this sets).") var thumbnailDecodes =
        ThumbnailLimits().concurrentDecodes
    @Option(help: "Seconds one thumbnail's decode may take before it is stopped.") var thumbnailTimeout = 10
    @Option(help: "The most connections open at once; more are closed as they arrive.") var maxConnections = 512
    @Option(
        help:
            "The most connections one client address (an IPv6 one by its /64) may hold; more are closed as they arrive. Loopback is not counted. (default: 64; with --cluster, --max-connections: nodes forward to each other, and sit behind a load balancer that speaks for everyone)"
    ) var maxConnectionsPerAddress: Int?
    @Option(help: "Copy the views for as-of reads every this many events (see `tally snapshots`).") var snapshotEvery = Int(SnapshotPolicy().every)
    @Option(help: "The most snapshots of the views kept; older ones thin out evenly.") var snapshotsKept = SnapshotPolicy().keep
    @Option(help: "Seconds a connection may send nothing between requests or within a request head, and the most a JSON body may take, before it is cut off.")
    var idleTimeout = 30.0
    /// The most a JSON body may take to arrive: `--idle-timeout`.
    var bodyTimeout: Duration { .milliseconds(Int64(idleTimeout * 1000)) }
    @Option(help: "Host every ledger in this folder (made with 'tally ledgers create'), at /v1/ledgers/NAME/…, instead of the one --data-dir.")
    var ledgers: String?
    @Option(
        help:
            "With --ledgers: the most ledgers open at once; the least recently used idle one closes first. (default: 1000, or fewer if the descriptor limit cannot hold them beside --max-connections)"
    ) var maxOpenLedgers: Int?
    @Option(help: "With --ledgers: seconds a ledger may go unused before it is closed.") var idleCloseSeconds = 300
    @Option(help: "With --ledgers: be a node of the cluster on this PostgreSQL (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE); see docs/OPERATIONS.md.")
    var cluster: String?
    @Option(help: "With --cluster: this node's name, unique in the cluster (default: the host name and port).") var node: String?
    @Option(help: "With --cluster: where other nodes reach this one (default: http://HOST:PORT).") var advertise: String?
    @Option(help: "With --cluster: seconds a ledger's lease lasts unrenewed (renewed every third of it).") var leaseSeconds = 6

    func run() async throws {
        // Logs go to standard error; standard output carries only the "listening" line.
        var logger = Logger(label: "tally") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .info
        guard (0...65_535).contains(port) else { throw CLIError("invalid --port \(port): 0 to 65535 (0: any free port)") }
        guard (1...86_400).contains(syncInterval) else { throw CLIError("invalid --sync-interval \(syncInterval): 1 to 86400 seconds") }
        guard (1...1_000).contains(maxStreamsPerToken) else { throw CLIError("invalid --max-streams-per-token \(maxStreamsPerToken): 1 to 1000") }
        guard (1...100_000).contains(maxConnections) else { throw CLIError("invalid --max-connections \(maxConnections): 1 to 100000") }
        let maxConnectionsPerAddress = self.maxConnectionsPerAddress ?? (cluster == nil ? ServerOptions().maxConnectionsPerAddress : maxConnections)
        guard (1...100_000).contains(maxConnectionsPerAddress) else {
            throw CLIError("invalid --max-connections-per-address \(maxConnectionsPerAddress): 1 to 100000")
        }
        guard idleTimeout.isFinite, (0.1...3_600).contains(idleTimeout) else { throw CLIError("invalid --idle-timeout \(idleTimeout): 0.1 to 3600 seconds") }
        guard (1...4_096).contains(maxAttachmentMib) else { throw CLIError("invalid --max-attachment-mib \(maxAttachmentMib): 1 to 4096") }
        guard (1...(1 << 30)).contains(attachmentQuotaMib) else { throw CLIError("invalid --attachment-quota-mib \(attachmentQuotaMib): 1 to 2^30") }
        guard (1_000...1_000_000_000).contains(snapshotEvery) else { throw CLIError("invalid --snapshot-every \(snapshotEvery): 1000 to 1000000000 events") }
        guard (1...1_000).contains(snapshotsKept) else { throw CLIError("invalid --snapshots-kept \(snapshotsKept): 1 to 1000") }
        guard (16...4_096).contains(thumbnailDecodeMib) else { throw CLIError("invalid --thumbnail-decode-mib \(thumbnailDecodeMib): 16 to 4096") }
        guard (1...64).contains(thumbnailDecodes) else { throw CLIError("invalid --thumbnail-decodes \(thumbnailDecodes): 1 to 64") }
        guard (1...600).contains(thumbnailTimeout) else { throw CLIError("invalid --thumbnail-timeout \(thumbnailTimeout): 1 to 600 seconds") }
        var attachments = AttachmentLimits(maxBytes: maxAttachmentMib << 20, quota: attachmentQuotaMib << 20, allowOtherTypes: allowAnyAttachmentType)
        // Each decode in a process of its own: this binary, as `tally thumbnail-worker`.
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        attachments.thumbnails = ThumbnailLimits(
            maxDecodeBytes: thumbnailDecodeMib << 20, concurrentDecodes: thumbnailDecodes,
            decodeTimeout: .seconds(thumbnailTimeout), workerCommand: [executable, "thumbnail-worker"])
        var options = ServerOptions()
        (options.host, options.port, options.maxConnections) = (host, port, maxConnections)
        options.maxConnectionsPerAddress = maxConnectionsPerAddress
        options.idleTimeout = .milliseconds(Int64(idleTimeout * 1000))
        options.schedule = BackgroundSchedule(peerSync: .seconds(syncInterval), snapshots: SnapshotPolicy(every: UInt64(snapshotEvery), keep: snapshotsKept))
        if let ledgers {
            try await serveHosted(ledgers, options: options, attachments: attachments, logger: logger)
            return
        }
        // Not quietly one ledger on its own for someone who meant a node of a cluster.
        guard cluster == nil, node == nil, advertise == nil else {
            throw CLIError("--cluster, --node and --advertise are for hosted ledgers: add --ledgers DIR")
        }
        // Running out of descriptors kills the process (`DescriptorBudget`): refuse what may not fit.
        do { try DescriptorBudget.raised().check(maxConnections: maxConnections, maxOpenLedgers: nil) } catch { throw CLIError(error.message) }
        let service = try TallyService(
            directory: try global.open(), logger: logger, lockTimeout: global.lockTimeout, maxStreamsPerToken: maxStreamsPerToken,
            bodyTimeout: bodyTimeout, attachmentLimits: attachments)
        let directory = service.directory
        let app = buildApplication(service, options, logger: logger) { address, boundPort in
            try? LocalServer.write(directory, url: "http://127.0.0.1:\(boundPort)", tokens: service.tokens)
            // Unbuffered: scripts and tests wait for this line.
            try? Output.standardOutput(
                Data(
                    """
                    Tally is listening on \(address) (replica \(directory.identity.replicaId), data \(directory.path)).
                    Get a token: tally token create --name NAME --scope read,write --data-dir \(directory.path)\n
                    """.utf8))
        }
        do {
            try await app.runService()
        } catch {
            LocalServer.remove(directory, tokens: service.tokens)
            service.close()
            throw error
        }
        LocalServer.remove(directory, tokens: service.tokens)
        // In-flight appends finish and are fsynced before the writer lets go.
        service.close()
    }
}

extension ServeCommand {
    /// Serves every ledger in `folder` until SIGTERM or SIGINT, then closes each.
    func serveHosted(_ folder: String, options: ServerOptions, attachments: AttachmentLimits, logger: Logger) async throws {
        let budget = DescriptorBudget.raised()
        guard let maxOpenLedgers = self.maxOpenLedgers ?? budget.defaultMaxOpen(maxConnections: options.maxConnections) else {
            throw CLIError(
                "--max-connections \(options.maxConnections) leaves no room for open ledgers within this process's \(budget.limit) file descriptors: lower it, or raise the limit (ulimit -n)"
            )
        }
        guard (1...100_000).contains(maxOpenLedgers) else { throw CLIError("invalid --max-open-ledgers \(maxOpenLedgers): 1 to 100000") }
        do { try budget.check(maxConnections: options.maxConnections, maxOpenLedgers: maxOpenLedgers) } catch { throw CLIError(error.message) }
        guard (1...86_400).contains(idleCloseSeconds) else { throw CLIError("invalid --idle-close-seconds \(idleCloseSeconds): 1 to 86400") }
        var isFolder: ObjCBool = false
        // A node of a cluster keeps its copies of the ledgers there: made if missing (the cluster holds the ledgers).
        if cluster != nil, !FileManager.default.fileExists(atPath: folder) {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw CLIError("--ledgers \(folder) is not a folder (make it with 'tally ledgers create NAME --ledgers \(folder)')")
        }
        var limits = HostingLimits()
        (limits.maxOpen, limits.idleClose, limits.schedule) = (maxOpenLedgers, .seconds(idleCloseSeconds), options.schedule)
        limits.hardMaxOpen = budget.maxOpenLedgers(maxConnections: options.maxConnections)
        let thumbnails = TallyService.thumbnailQueue(attachments)
        let (streams, bodyTimeout) = (maxStreamsPerToken, bodyTimeout)
        let node = try clusterNode(options, logger: logger)
        let hosted = HostedLedgers(root: (folder as NSString).standardizingPath, limits: limits, cluster: node?.hosting, logger: logger) {
            directory, archive in
            try TallyService(
                directory: directory, logger: logger, lockTimeout: 0, maxStreamsPerToken: streams, bodyTimeout: bodyTimeout,
                attachmentLimits: attachments, thumbnails: thumbnails, viewConnections: .few, archive: archive,
                threadsAtOnce: LedgerLimits.hostedThreadsAtOnce)
        }
        let app = buildHostedApplication(hosted, options, services: node.map { [$0.client] } ?? [], logger: logger) { address, port in
            if let node {
                if advertise == nil { node.hosting.advertise("http://\(options.host):\(port)") }  // --port 0: the port given
                do { try await node.hosting.archive.migrate() } catch {
                    logger.error("the cluster's tables could not be made", metadata: ["error": "\(error)"])
                }
                try? await node.hosting.archive.announce(url: node.hosting.url)
            }
            try? Output.standardOutput(
                Data(
                    "Tally is listening on \(address), hosting the ledgers in \(hosted.root) at /v1/ledgers/NAME/\(node.map { " as node \($0.hosting.archive.node) of a cluster" } ?? "").\n"
                        .utf8))
        }
        try await app.runService()
    }

    /// The cluster this server is a node of (`--cluster`), or nil.
    func clusterNode(_ options: ServerOptions, logger: Logger) throws -> (client: PostgresClient, hosting: ClusterHosting)? {
        guard let cluster else {
            guard node == nil, advertise == nil else { throw CLIError("--node and --advertise are for a node of a cluster (--cluster)") }
            return nil
        }
        guard (3...600).contains(leaseSeconds) else { throw CLIError("invalid --lease-seconds \(leaseSeconds): 3 to 600") }
        let configuration: PostgresClient.Configuration
        do { configuration = try PostgresURL.configuration(cluster) } catch { throw CLIError("invalid --cluster: \(error)") }
        let name = node ?? "\(ProcessInfo.processInfo.hostName):\(options.port)"
        guard (1...200).contains(name.utf8.count), name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.:".contains($0)) }) else {
            throw CLIError("invalid --node '\(name)': 1 to 200 of a-z, A-Z, 0-9, '-', '_', '.', ':'")
        }
        guard advertise != nil || !["0.0.0.0", "::", "[::]"].contains(options.host) else {
            throw CLIError("--host \(options.host) listens everywhere: say where the other nodes reach this one with --advertise http://HOST:PORT")
        }
        let url = advertise ?? "http://\(options.host):\(options.port)"
        guard let parsed = URLComponents(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host?.isEmpty == false, parsed.path.isEmpty
        else { throw CLIError("invalid --advertise '\(url)': http://HOST:PORT") }
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let archive = ClusterArchive(client: client, node: name, logger: logger)
        return (
            client,
            ClusterHosting(
                archive: archive, url: url, leaseDuration: .seconds(leaseSeconds), bodyTimeout: bodyTimeout, logger: logger)
        )
    }
}

struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Manage this replica's API tokens (stored as hashes; never replicated).",
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a token and print it once.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var hosted: ClusterLedgerOptions
        @Option(help: "A name for the token (recorded as the actor of its writes).") var name: String
        @Option(help: "Comma-separated scopes: read, write, replicate.") var scope = "read"
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            var scopes: [TokenScope] = []
            for part in scope.split(separator: ",") {
                guard let scope = TokenScope(rawValue: part.trimmingCharacters(in: .whitespaces)) else {
                    throw CLIError("invalid --scope '\(part)': read, write or replicate")
                }
                scopes.append(scope)
            }
            guard TokenStore.isValidName(name) else { throw CLIError("invalid --name: \(TokenStore.nameRule)") }
            let secret: String
            if let target = try hosted.target() {
                let (made, record) = try TokenStore.make(name: name, scopes: scopes)
                try await target.make(.addToken(record))
                secret = made
            } else {
                secret = try TokenStore(directory: try global.open()).create(name: name, scopes: scopes)
            }
            if json {
                print(
                    JSONText.object([("name", .string(name)), ("scopes", .array(scopes.map { .string($0.rawValue) })), ("token", .string(secret))]).serialized)
            } else {
                print(secret)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tokens (names and scopes; secrets are not stored).")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var hosted: ClusterLedgerOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let tokens = try await hosted.onFolder(else: global) { try TokenStore(folder: $0).all() }
            if json {
                print(
                    JSONText.array(
                        tokens.map {
                            .object([
                                ("name", .string($0.name)), ("scopes", .array($0.scopes.map { .string($0.rawValue) })),
                                ("createdAt", .string($0.createdAt)),
                            ])
                        }
                    ).serialized)
                return
            }
            print(
                Table.render(
                    header: ["NAME", "SCOPES", "CREATED"], rows: tokens.map { [$0.name, $0.scopes.map(\.rawValue).joined(separator: ","), $0.createdAt] }))
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a token; a running server refuses it at once.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var hosted: ClusterLedgerOptions
        @Argument(help: "The token's name.") var name: String

        func run() async throws {
            if let target = try hosted.target() {
                try await target.make(.revokeToken(name: name))
                return
            }
            guard try TokenStore(directory: try global.open()).revoke(name: name) else { throw CLIError("no token named '\(name)'") }
        }
    }
}
