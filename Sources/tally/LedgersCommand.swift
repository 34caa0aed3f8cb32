import ArgumentParser
import Foundation
import TallyCluster
import TallyCore
import TallyLedger
import TallyLog
import TallyServer

/// `tally ledgers`: the operator's commands over a folder of hosted ledgers
/// (`tally serve --ledgers DIR`). Each turns into one `LedgerFolder` call.
struct LedgersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledgers", abstract: "Manage the ledgers a hosted server serves ('tally serve --ledgers DIR').",
        subcommands: [Create.self, List.self, Show.self, Quota.self, Delete.self, Restore.self, Purge.self, OperatorToken.self])

    struct Folder: ParsableArguments {
        @Option(help: "The folder of ledgers.") var ledgers: String

        var folder: LedgerFolder { LedgerFolder(root: ledgers) }

        /// The folder, which must be one: listing a path that is none (a typo, a file) says so
        /// rather than printing an empty list or Foundation's error.
        var existingFolder: LedgerFolder {
            get throws {
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: ledgers, isDirectory: &isFolder), isFolder.boolValue else {
                    throw CLIError("no folder of ledgers at \(ledgers) ('tally ledgers create --ledgers \(ledgers) NAME' makes one)")
                }
                return folder
            }
        }
    }

    static func name(_ text: String) throws -> LedgerName {
        do { return try LedgerName(text) } catch let error as TallyCore.ValidationError { throw CLIError(error.message) }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a new, empty ledger (on a cluster: registered in its PostgreSQL, for every node).")
        @OptionGroup var folder: Folder
        @Argument(help: "Its name: 1 to 63 of a-z, 0-9 and '-'.") var name: String
        @Option(help: "Register it in the cluster on this PostgreSQL (postgres://…) instead of only in the folder.") var cluster: String?
        @Option(help: "Also make an API token of this name (scopes read and write) and print it once.") var token: String?

        func run() async throws {
            let name = try LedgersCommand.name(name)
            if let token, !TokenStore.isValidName(token) { throw CLIError("invalid --token: \(TokenStore.nameRule)") }
            if let cluster {
                try await registerInCluster(name, cluster)
                return
            }
            let directory: DataDirectory
            do { directory = try folder.folder.create(name) } catch let error as LedgerFolderError { throw CLIError("\(error)") }
            print("Created ledger \(name) (replica \(directory.identity.replicaId)) in \(directory.path)")
            if let token {
                print("Token \(token): \(try TokenStore(directory: directory).create(name: token, scopes: [.read, .write]))")
            } else {
                print("Give it a token: tally token create --name NAME --scope read,write --data-dir \(directory.path)")
            }
        }

        /// Makes the ledger's identity, signing key and token in a folder of its own beside
        /// the ledgers, registers them in the cluster, and removes the folder: each node
        /// makes its copy from the cluster when it first serves the ledger.
        func registerInCluster(_ name: LedgerName, _ url: String) async throws {
            let staging = folder.folder.root + "/.staging-\(name)-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder.folder.root, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: staging) }
            let directory = try DataDirectory.create(path: staging, name: name.text)
            let secret = try token.map { try TokenStore(directory: directory).create(name: $0, scopes: [.read, .write]) }
            let files = LedgerFiles.read(folder: staging)
            try await ClusterCommand.withArchive(url) { archive in
                do { try await archive.register(name.text, files: files) } catch let refusal as ClusterRefusal { throw CLIError("\(refusal)") }
            }
            print("Registered ledger \(name) (replica \(directory.identity.replicaId)) in the cluster; every node serves it at /v1/ledgers/\(name)/")
            if let token, let secret { print("Token \(token): \(secret)") }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the ledgers (and, with --trash, the deleted ones).")
        @OptionGroup var folder: Folder
        @Flag(help: "List the trash instead.") var trash = false
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            if trash {
                let entries = try folder.existingFolder.trashed()
                let formatter = ISO8601DateFormatter()
                if json {
                    print(
                        JSONText.array(
                            entries.map { .object([("name", .string($0.name.text)), ("deletedAt", .string(formatter.string(from: $0.deletedAt)))]) }
                        ).serialized)
                } else {
                    print(Table.render(header: ["NAME", "DELETED"], rows: entries.map { [$0.name.text, formatter.string(from: $0.deletedAt)] }))
                }
                return
            }
            let names = try folder.existingFolder.names()
            if json { print(JSONText.array(names.map { .string($0.text) }).serialized) } else { names.forEach { print($0) } }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a ledger: its replica, events, bytes on disk and tokens.")
        @OptionGroup var folder: Folder
        @Argument(help: "The ledger.") var name: String
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let name = try LedgersCommand.name(name)
            let directory: DataDirectory
            do { directory = try folder.folder.open(name) } catch let error as LedgerFolderError { throw CLIError("\(error)") }
            let stats = try directory.reader.statistics()
            let attachments = try BlobStore(directory: directory).all()
            let tokens = try TokenStore(directory: directory).all()
            let members = try MemberStore(directory: directory).all()
            let quota = try LedgerQuota.read(folder: directory.path)
            let attachmentBytes = attachments.reduce(0) { $0 + $1.size }
            let texts: [(String, String)] = [("name", name.text), ("replicaId", directory.identity.replicaId), ("path", directory.path)]
            let counts: [(String, Int)] = [
                ("events", stats.events), ("logBytes", stats.bytesOnDisk), ("attachments", attachments.count), ("attachmentBytes", attachmentBytes),
                ("tokens", tokens.count), ("members", members.count),
            ]
            let limits = quota.shown
            if json {
                let quotaJSON = JSONText.object(limits.map { ($0, $1.map { .int(Int64($0)) } ?? .null) })
                print(JSONText.object(texts.map { ($0, .string($1)) } + counts.map { ($0, .int(Int64($1))) } + [("quota", quotaJSON)]).serialized)
            } else {
                print(Table.keyValue(texts + counts.map { ($0, String($1)) } + limits.map { ("quota \($0)", $1.map(String.init) ?? "none") }))
            }
        }
    }

    struct Quota: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set what a ledger may use; a server holds it from the ledger's next write. A limit left out is left as it was.",
            discussion: "Over quota, writes are refused whole (429 for events, 507 for bytes), reads go on.")
        @Option(help: "The folder of ledgers.") var ledgers: String?
        @Option(help: "Instead of --ledgers: the ledger of the cluster on this PostgreSQL (postgres://…), for the node that serves it.")
        var cluster: String?
        @Argument(help: "The ledger.") var name: String
        @Option(help: "Events a UTC day (its own writes, imports and pushes).") var eventsPerDay: Int?
        @Option(help: "MiB its log may hold on disk.") var logMib: Int?
        @Option(help: "MiB its attachments may hold together.") var attachmentMib: Int?
        @Option(help: "Members it may have.") var members: Int?
        @Option(help: "Change feeds it may hold open at once.") var streams: Int?
        @Flag(help: "Remove every limit first.") var clear = false

        func run() async throws {
            let name = try LedgersCommand.name(name)
            for (flag, value) in [
                ("events-per-day", eventsPerDay), ("log-mib", logMib), ("attachment-mib", attachmentMib), ("members", members), ("streams", streams),
            ] {
                if let value, !(0...1 << 30).contains(value) { throw CLIError("invalid --\(flag) \(value): 0 to 2^30") }
            }
            var change = LedgerQuota()
            change.eventsPerDay = eventsPerDay
            change.logBytes = logMib.map { $0 << 20 }
            change.attachmentBytes = attachmentMib.map { $0 << 20 }
            change.members = members
            change.streams = streams
            switch (ledgers, cluster) {
            case (nil, let url?):
                try await ClusterLedger(url: url, ledger: name).make(.changeQuota(limits: change, clearing: clear))
                print("Changed the quota of \(name) in the cluster.")
            case (let ledgers?, nil):
                let directory: DataDirectory
                do { directory = try LedgerFolder(root: ledgers).open(name) } catch let error as LedgerFolderError { throw CLIError("\(error)") }
                let quota = try LedgerQuota.read(folder: directory.path).changed(by: change, clearing: clear)
                try LedgerQuota.write(quota, folder: directory.path)
                print("Quota of \(name): " + quota.shown.map { "\($0) \($1.map(String.init) ?? "none")" }.joined(separator: ", "))
            default:
                throw CLIError("give --ledgers DIR (a folder of ledgers) or --cluster URL (a cluster's ledger), one of them")
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move a ledger to the trash (restore it with 'tally ledgers restore'; 'tally ledgers purge' removes it for good).")
        @OptionGroup var folder: Folder
        @Argument(help: "The ledger.") var name: String

        func run() throws {
            let name = try LedgersCommand.name(name)
            do {
                let place = try folder.folder.trash(name)
                print("Moved ledger \(name) to \(place); its tokens no longer work.")
            } catch let error as LedgerFolderError { throw CLIError("\(error)") }
        }
    }

    struct Restore: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move the most recently deleted ledger of this name back from the trash.")
        @OptionGroup var folder: Folder
        @Argument(help: "The ledger.") var name: String

        func run() throws {
            let name = try LedgersCommand.name(name)
            do { try folder.folder.restore(name) } catch let error as LedgerFolderError { throw CLIError("\(error)") }
            print("Restored ledger \(name).")
        }
    }

    struct OperatorToken: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "operator-token",
            abstract: "Make (or with --revoke, remove) a token that reads the hosted server's own /metrics, and no ledger.")
        @OptionGroup var folder: Folder
        @Option(help: "A name for the token.") var name: String
        @Flag(help: "Remove the token of this name instead.") var revoke = false

        func run() throws {
            guard TokenStore.isValidName(name) else { throw CLIError("invalid --name: \(TokenStore.nameRule)") }
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder.folder.root, isDirectory: &isFolder), isFolder.boolValue else {
                throw CLIError("--ledgers \(folder.ledgers) is not a folder of ledgers")
            }
            if revoke {
                guard try folder.folder.operatorTokens.revoke(name: name) else { throw CLIError("no operator token named '\(name)'") }
                print("Revoked operator token \(name).")
                return
            }
            do { print(try folder.folder.createOperatorToken(name: name)) } catch let error as LogError { throw CLIError("\(error)") }
        }
    }

    struct Purge: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove for good the ledgers deleted more than --older-than days ago.")
        @OptionGroup var folder: Folder
        @Option(help: "The grace period, in days.") var olderThan = 30

        func run() throws {
            guard (0...36_500).contains(olderThan) else { throw CLIError("invalid --older-than \(olderThan): 0 to 36500 days") }
            let removed = try folder.folder.purge(deletedBefore: Date().addingTimeInterval(-Double(olderThan) * 86_400))
            print("Removed \(removed.count) deleted ledger(s) for good\(removed.isEmpty ? "" : ": " + removed.map(\.text).joined(separator: ", ")).")
        }
    }
}
