import ArgumentParser
import Foundation
import TallyCore
import TallyLedger
import TallyLog
import TallyServer

/// `tally ledgers`: the operator's commands over a folder of hosted ledgers
/// (`tally serve --ledgers DIR`). Each turns into one `LedgerFolder` call.
struct LedgersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledgers", abstract: "Manage the ledgers a hosted server serves ('tally serve --ledgers DIR').",
        subcommands: [Create.self, List.self, Show.self, Delete.self, Restore.self, Purge.self])

    struct Folder: ParsableArguments {
        @Option(help: "The folder of ledgers.") var ledgers: String

        var folder: LedgerFolder { LedgerFolder(root: ledgers) }
    }

    static func name(_ text: String) throws -> LedgerName {
        do { return try LedgerName(text) } catch let error as TallyCore.ValidationError { throw CLIError(error.message) }
    }

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a new, empty ledger.")
        @OptionGroup var folder: Folder
        @Argument(help: "Its name: 1 to 63 of a-z, 0-9 and '-'.") var name: String

        func run() throws {
            let name = try LedgersCommand.name(name)
            let directory: DataDirectory
            do { directory = try folder.folder.create(name) } catch let error as LedgerFolderError { throw CLIError("\(error)") }
            print("Created ledger \(name) (replica \(directory.identity.replicaId)) in \(directory.path)")
            print("Give it a token: tally token create --name NAME --scope read,write --data-dir \(directory.path)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the ledgers (and, with --trash, the deleted ones).")
        @OptionGroup var folder: Folder
        @Flag(help: "List the trash instead.") var trash = false
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            if trash {
                let entries = try folder.folder.trashed()
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
            let names = try folder.folder.names()
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
            let attachmentBytes = attachments.reduce(0) { $0 + $1.size }
            let texts: [(String, String)] = [("name", name.text), ("replicaId", directory.identity.replicaId), ("path", directory.path)]
            let counts: [(String, Int)] = [
                ("events", stats.events), ("logBytes", stats.bytesOnDisk), ("attachments", attachments.count), ("attachmentBytes", attachmentBytes),
                ("tokens", tokens.count),
            ]
            if json {
                print(JSONText.object(texts.map { ($0, .string($1)) } + counts.map { ($0, .int(Int64($1))) }).serialized)
            } else {
                print(Table.keyValue(texts + counts.map { ($0, String($1)) }))
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
