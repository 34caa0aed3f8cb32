import ArgumentParser
import Foundation
import TallyCore
import TallyLedger
import TallyLog

/// `tally keys`: this replica's signing key (docs/MERGE.md, "Signed origins").
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "This replica's signing key: show its public half, or rotate it.", subcommands: [Show.self, Rotate.self])

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print this replica's id and public key (what another replica pins with 'tally peers trust'). The private key is never printed.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let directory = try global.open()
            guard let key = try Ledger.publicKey(of: directory) else {
                throw CLIError("this replica has no signing key yet; it is made the next time the log is opened for writing (any write, or 'tally serve')")
            }
            if json {
                print(JSONText.object([("replicaId", .string(directory.identity.replicaId)), ("publicKey", .string(key.description))]).serialized)
            } else {
                print("replica \(directory.identity.replicaId)\npublic key \(key)")
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Replace the signing key: the rotation, signed by the old key, is recorded in the log and travels to every replica; the old key is deleted. Needs the writer lock (stop 'tally serve' first)."
        )
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let rotation = try await global.withLedger { try await $0.rotateSigningKey() }
            print("rotated after #\(rotation.afterSequence): old key \(rotation.oldKey)\nnew key \(rotation.newKey)")
        }
    }
}
