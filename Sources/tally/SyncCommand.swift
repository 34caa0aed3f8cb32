import ArgumentParser
import Foundation
import TallyCore
import TallyLog
import TallyServer
import TallyLedger
import TallySync

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Pull what this replica lacks from a peer, then push what the peer lacks.",
        discussion: """
            PEER is a configured peer's name ('tally peers add') or a URL with --token. Received events are verified and \
            appended in batches as they arrive, so an interrupted sync resumes where it stopped. If a server runs on this data \
            directory, the sync is handed to it instead of fighting it for the writer lock.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "A peer name or URL.") var peer: String
    @Option(help: "The peer's token (replicate scope), with a URL.") var token: String?
    @Flag(help: "Pull into a scratch copy and report what would change; change nothing.") var dryRun = false
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let directory = try global.open()
        let target = try resolvePeer(directory)
        if dryRun {
            try await self.dryRun(directory, target)
            return
        }
        let report: Ledger.SyncReport
        do {
            let ledger = try Ledger(directory: directory, lockTimeout: 0)
            defer { ledger.close() }
            // A configured peer's sync is recorded for the sync status (`GET /v1/sync/status`).
            if let configured = try Ledger.peer(named: peer, of: directory) {
                report = try await ledger.sync(withPeer: Peer(name: configured.name, url: configured.url, token: token ?? configured.token))
            } else {
                report = try await ledger.sync(with: target)
            }
        } catch let error where ReplicaClient.failureInWords(error) != nil {
            // A peer's failure in words, never its own text (a decoding error quotes it); this
            // replica's own failures (a full disk) are told as they are.
            throw CLIError("sync with \(peer.contains("://") ? Peer.displayURL(peer) : peer) failed: \(ReplicaClient.failureInWords(error) ?? "")")
        } catch LogError.writerLocked {
            guard let local = LocalServer.read(directory) else {
                throw CLIError(
                    "another process holds the writer lock and no running server is recorded in \(directory.path)/server.json; retry when it is done")
            }
            // The service syncs only with configured peers: a URL typed here is registered as
            // one first (named by the URL, its token updated), then named to the service.
            let name = try configuredPeerName(directory) ?? registerPeer(directory, target)
            let body = #"{"peer": \#(JSONText.quote(name))}"#
            let text = try await ReplicaClient(baseURL: local.url, token: local.token, label: "the running server").requestSync(body)
            print(json ? text : "Handed to the running server: \(text)")
            return
        }
        if json {
            print(report.json.serialized)
        } else {
            print(
                "Pulled \(report.pulled), pushed \(report.pushed) new events (\(report.alreadyHeld) already held); \(report.newConflicts) new conflicts, \(report.newMerges) new category merges."
            )
            if let leftOut = report.leftOut { print("Not sent: \(leftOut)") }
        }
    }

    /// Registers `target` as the peer named by its URL without credentials (replacing an older
    /// registration's token): a name is shown to every reader of the sync status.
    func registerPeer(_ directory: DataDirectory, _ target: ReplicaClient) throws -> String {
        guard case .token(let token) = target.credential else { throw CLIError("a peer is registered with a token") }
        let name = Peer.displayURL(target.baseURL)
        try Ledger.removePeer(named: name, from: directory)
        try Ledger.addPeer(Peer(name: name, url: target.baseURL, token: token), to: directory)
        return name
    }

    func configuredPeerName(_ directory: DataDirectory) -> String? {
        (try? Ledger.peers(of: directory))?.first { $0.name == peer || $0.name == Peer.displayURL(peer) }?.name
    }

    func resolvePeer(_ directory: DataDirectory) throws -> ReplicaClient {
        if let configured = try Ledger.peer(named: peer, of: directory) {
            return ReplicaClient(baseURL: configured.url, token: token ?? configured.token, label: configured.name)
        }
        guard peer.hasPrefix("http://") || peer.hasPrefix("https://") else { throw CLIError("'\(peer)' is neither a configured peer nor an http(s) URL") }
        guard let token else { throw CLIError("--token is needed with a peer URL (a token of the peer's with the replicate scope)") }
        return ReplicaClient(baseURL: peer, token: token)
    }

    /// Pulls into a copy of the data directory and reports the difference.
    func dryRun(_ directory: DataDirectory, _ target: ReplicaClient) async throws {
        let scratch = NSTemporaryDirectory() + "/tally-dry-run-\(UUID.random().uuidString.prefix(8))"
        try FileManager.default.copyItem(atPath: directory.path, toPath: scratch)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let copy = try DataDirectory(path: scratch)
        let ledger = try Ledger(directory: copy)
        defer { ledger.close() }
        let report = try await ledger.sync(with: target, push: false)
        if json {
            print(
                JSONText.object([
                    ("dryRun", .bool(true)), ("newEvents", .int(Int64(report.pulled))), ("newConflicts", .int(Int64(report.newConflicts))),
                    ("newMerges", .int(Int64(report.newMerges))),
                ]).serialized)
        } else {
            print(
                "Dry run: \(report.pulled) new events would arrive, with \(report.newConflicts) property conflicts and \(report.newMerges) category merges. Nothing was changed."
            )
        }
    }
}

struct PeersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peers", abstract: "Named peers and their tokens, kept in the data directory.",
        subcommands: [Add.self, List.self, Remove.self, Trust.self, Keys.self])

    struct Add: ParsableCommand {
        @OptionGroup var global: GlobalOptions
        @Argument(help: "A name for the peer.") var name: String
        @Argument(help: "Its service URL, e.g. http://192.168.0.5:8080.") var url: String
        @Option(help: "A token of the peer's with the replicate scope.") var token: String

        func run() throws { try Ledger.addPeer(Peer(name: name, url: url, token: token), to: try global.open()) }
    }

    struct List: ParsableCommand {
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let peers = try Ledger.peers(of: try global.open())
            if json {
                print(JSONText.array(peers.map { .object([("name", .string($0.name)), ("url", .string($0.url))]) }).serialized)
                return
            }
            print(Table.render(header: ["NAME", "URL"], rows: peers.map { [$0.name, $0.url] }))
        }
    }

    struct Remove: ParsableCommand {
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The peer's name.") var name: String

        func run() throws {
            guard try Ledger.removePeer(named: name, from: try global.open()) else { throw CLIError("no peer named '\(name)'") }
        }
    }
}

extension PeersCommand {
    struct Trust: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Pin a replica's public key before first contact (from its 'tally keys show'): its events are then accepted only under that key, never under whatever key first arrives."
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The replica's id (a UUID).") var replicaId: String
        @Argument(help: "Its public key (64 hex digits).") var publicKey: String

        func run() throws {
            try Ledger.trust(originText: replicaId, keyHex: publicKey, in: try global.open())
            print("pinned \(publicKey.lowercased()) for \(replicaId.lowercased())")
        }
    }

    struct Keys: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The public key pinned for each origin this replica accepts events of, and how it was pinned.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let pins = try Ledger.pinnedKeys(of: try global.open())
            if json {
                print(
                    JSONText.array(
                        pins.map { entry in
                            .object([
                                ("origin", .string(entry.origin)), ("key", .string(entry.pin.key)), ("pinnedBy", .string(entry.pin.pinnedBy)),
                                ("at", .string(entry.pin.at)),
                            ])
                        }
                    ).serialized)
                return
            }
            print(Table.render(header: ["ORIGIN", "KEY", "PINNED BY", "AT"], rows: pins.map { [$0.origin, $0.pin.key, $0.pin.pinnedBy, $0.pin.at] }))
        }
    }
}

/// `DATA_DIR/server.json` (mode 0600), written by a running `tally serve`: where it listens and
/// a token of its own, so CLI commands can hand it work that needs the writer lock.
enum LocalServer {
    struct Record: Codable {
        var url: String
        var token: String
    }

    static func path(_ directory: DataDirectory) -> String { directory.path + "/server.json" }

    static func read(_ directory: DataDirectory) -> Record? {
        FileManager.default.contents(atPath: path(directory)).flatMap { try? JSONDecoder().decode(Record.self, from: $0) }
    }

    static func write(_ directory: DataDirectory, url: String, tokens: TokenStore) throws {
        _ = try? tokens.revoke(name: "local:server")
        let token = try tokens.create(name: "local:server", scopes: TokenScope.allCases)
        try writeDurably(try JSONEncoder().encode(Record(url: url, token: token)), to: path(directory), mode: 0o600)
    }

    static func remove(_ directory: DataDirectory, tokens: TokenStore) {
        try? FileManager.default.removeItem(atPath: path(directory))
        _ = try? tokens.revoke(name: "local:server")
    }
}
