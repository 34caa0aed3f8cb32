import ArgumentParser
import Foundation
import TallyCore
import TallyLog
import TallyLedger
import TallyStore
import TallySync

struct VectorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vector", abstract: "Print this replica's version vector: per origin, the highest contiguous sequence held.")
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print JSON (the form 'segments export --for' reads).") var json = false

    func run() throws {
        let vector = try Ledger.vector(of: try global.open())
        if json {
            print(vector.json)
            return
        }
        print(
            Table.render(
                header: ["ORIGIN", "SEQUENCE"], rows: vector.sequences.sorted { $0.key < $1.key }.map { [$0.key.description, String($0.value)] },
                rightAligned: [1]))
    }
}

struct SegmentsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "segments", abstract: "Carry events between replicas as files.", subcommands: [Export.self, Import.self])

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the events another replica lacks (all, without --for) to a folder, with a manifest.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "The folder to write (created; must hold no bundle).") var out: String
        @Option(name: .customLong("for"), help: "The other replica's vector (a file written by 'tally vector --json').") var vectorFile: String?
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            var vector: VersionVector?
            if let vectorFile {
                guard let data = FileManager.default.contents(atPath: vectorFile) else { throw CLIError("cannot read --for \(vectorFile)") }
                do { vector = try JSONDecoder().decode(VersionVector.self, from: data) } catch {
                    throw CLIError("--for \(vectorFile) is not a version vector (expected {\"origins\": {\"<replica id>\": <sequence>}}): \(error)")
                }
            }
            let manifest = try Ledger.exportBundle(try global.open(), to: out, for: vector)
            if json {
                print(
                    JSONText.object([("events", .int(Int64(manifest.events))), ("files", .int(Int64(manifest.files.count))), ("out", .string(out))]).serialized)
            } else {
                print("Exported \(manifest.events) events from \(manifest.origins.count) origins in \(manifest.files.count) segment files to \(out)")
            }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify a bundle (checksums, hash chains, sequence continuity, clock skew) and apply what this replica lacks — all or nothing.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "A folder written by 'tally segments export'.") var folder: String
        @Option(help: "Refuse events stamped more than this many seconds ahead of this machine's clock.") var maxSkew: Double = 300
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let ledger = try Ledger(directory: try global.open(), lockTimeout: global.lockTimeout, maximumSkewMillis: try SkewOption.millis(maxSkew))
            defer { ledger.close() }
            let report = try await ledger.importBundle(from: folder)
            if json {
                print(
                    JSONText.object([
                        ("applied", .int(Int64(report.pulled))), ("alreadyHeld", .int(Int64(report.alreadyHeld))),
                        ("newConflicts", .int(Int64(report.newConflicts))), ("newMerges", .int(Int64(report.newMerges))),
                    ]).serialized)
            } else {
                print(
                    "Applied \(report.pulled) new events (\(report.alreadyHeld) already held); \(report.newConflicts) new conflicts, \(report.newMerges) new category merges."
                )
            }
        }
    }
}

struct ConflictsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts", abstract: "Property writes that sync overwrote: concurrent edits that lost, with both stamps and origins.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var asOf: AsOfOption
    @Option(help: "Only this entity (id or setting key).") var entity: String?
    @Flag(help: "Print JSON, as GET /v1/conflicts answers.") var json = false

    func run() throws {
        let views = try asOf.openViews(global)
        if json {
            print(try views.conflictsDocument(entity: entity).serialized)
            return
        }
        let conflicts = try views.conflicts(entity: entity)
        print(
            Table.render(
                header: ["ENTITY", "PROPERTY", "LOST", "LOSER", "KEPT", "WINNER"],
                rows: conflicts.map { c in
                    [
                        "\(c.entityType) \(c.entityID)", c.property, c.losingValue, "\(c.loserOrigin.prefix(8))@\(c.loserHLC)", c.winningValue,
                        "\(c.winnerOrigin.prefix(8))@\(c.winnerHLC)",
                    ]
                }))
    }
}

/// `--max-skew SECONDS`: checked, so a negative, infinite or absurd value is an error, not a trap.
enum SkewOption {
    static func millis(_ seconds: Double) throws -> UInt64 {
        guard seconds.isFinite, seconds >= 0, seconds <= 366 * 86_400 else {
            throw CLIError("invalid --max-skew \(seconds): seconds from 0 to \(366 * 86_400)")
        }
        return UInt64(seconds * 1000)
    }
}
