import ArgumentParser
import Foundation
import TallyCore
import TallyLedger

/// `tally snapshots list|take`: the copies of the views that as-of reads start from.
struct SnapshotsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshots", abstract: "Copies of the views that --as-of reads start from (tally serve takes them as the log grows).",
        subcommands: [List.self, Take.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every snapshot, each file checked against its recorded size and CRC-32C.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "One JSON array.") var json = false

        func run() throws {
            let views = try global.openViews()
            let rows = views.snapshots().map { ($0, views.problem(with: $0)) }
            if json {
                print(
                    JSONText.array(
                        rows.map { snapshot, problem in
                            .object([
                                ("index", .int(Int64(snapshot.index))), ("bytes", .int(snapshot.bytes)), ("takenAt", .string(snapshot.takenAt)),
                                ("schema", .string(snapshot.schema)), ("problem", problem.map(JSONText.string) ?? .null),
                            ])
                        }
                    ).serialized)
                return
            }
            print(
                Table.render(
                    header: ["LOG INDEX", "BYTES", "TAKEN", "CHECK"],
                    rows: rows.map { [String($0.0.index), String($0.0.bytes), $0.0.takenAt, $0.1 ?? "ok"] }, rightAligned: [0, 1]))
            if rows.contains(where: { $0.1 != nil }) { throw ExitCode(1) }
        }
    }

    struct Take: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Copy the views as they stand now (then thin the kept ones).")
        @OptionGroup var global: GlobalOptions
        @Option(help: "The most snapshots kept.") var keep = SnapshotPolicy().keep

        func run() throws {
            guard (1...1_000).contains(keep) else { throw CLIError("invalid --keep \(keep): 1 to 1000") }
            if let taken = try global.openViews().takeSnapshot(SnapshotPolicy(keep: keep), always: true) {
                print("Snapshot at log index \(taken.index): \(taken.bytes) bytes.")
            } else {
                print("There is already a snapshot at this log index (or the views are empty); nothing taken.")
            }
        }
    }
}
