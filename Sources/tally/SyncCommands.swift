import ArgumentParser
import Foundation
import TallyCore
import TallyLog
import TallyStore
import TallySync

struct VectorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vector", abstract: "Print this replica's version vector: per origin, the highest contiguous sequence held.")
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print JSON (the form 'segments export --for' reads).") var json = false

    func run() throws {
        let vector = try VersionVector(of: try global.open())
        if json {
            print(vector.json)
            return
        }
        print(Table.render(header: ["ORIGIN", "SEQUENCE"], rows: vector.sequences.sorted { $0.key < $1.key }.map { [$0.key.description, String($0.value)] },
                           rightAligned: [1]))
    }
}

struct SegmentsCommand: ParsableCommand {
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
            let manifest = try SegmentBundle.export(try global.open(), to: out, for: vector)
            if json {
                print(JSONText.object([("events", .int(Int64(manifest.events))), ("files", .int(Int64(manifest.files.count))), ("out", .string(out))]).serialized)
            } else {
                print("Exported \(manifest.events) events from \(manifest.origins.count) origins in \(manifest.files.count) segment files to \(out)")
            }
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify a bundle (checksums, hash chains, sequence continuity, clock skew) and apply what this replica lacks — all or nothing.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "A folder written by 'tally segments export'.") var folder: String
        @Option(help: "Refuse events stamped more than this many seconds ahead of this machine's clock.") var maxSkew: Double = 300
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let directory = try global.open()
            let writer = try directory.openWriter(configuration: global.logConfiguration)
            defer { writer.close() }
            var report = try SegmentBundle.importBundle(from: folder, into: writer, maximumSkewMillis: UInt64(maxSkew * 1000))
            try Projector(directory: directory).catchUp(startingFrom: report.folded.take())
            if json {
                print(JSONText.object([("applied", .int(Int64(report.applied))), ("alreadyHeld", .int(Int64(report.alreadyHeld))),
                                       ("fromReplica", .string(report.fromReplica))]).serialized)
            } else {
                print("Applied \(report.applied) new events from \(report.fromReplica) (\(report.alreadyHeld) already held).")
            }
        }
    }
}

struct ConflictsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts", abstract: "Property writes that sync overwrote: concurrent edits that lost, with both stamps and origins.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Only this entity (id or setting key).") var entity: String?
    @Flag(help: "One JSON array.") var json = false

    func run() throws {
        let conflicts = try openViews(global).database.read { try ProjectionQueries.conflicts($0, entityID: entity) }
        if json {
            print(JSONText.array(conflicts.map(ViewJSON.conflict)).serialized)
            return
        }
        print(Table.render(header: ["ENTITY", "PROPERTY", "LOST", "LOSER", "KEPT", "WINNER"], rows: conflicts.map { c in
            ["\(c.entityType) \(c.entityID)", c.property, c.losingValue, "\(c.loserOrigin.prefix(8))@\(c.loserHLC)", c.winningValue, "\(c.winnerOrigin.prefix(8))@\(c.winnerHLC)"]
        }))
    }
}
