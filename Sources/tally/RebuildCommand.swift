import ArgumentParser
import Foundation
import TallyCore
import TallyStore

struct RebuildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild-projections",
        abstract: "Replay the whole log into fresh views, compare them with the live ones, and swap them in.",
        discussion: "Readers keep working meanwhile. A rebuild killed half-way changes nothing; run it again.")
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Rebuild and compare only; exit 1 if the live views have drifted.") var verifyOnly = false
    @Flag(help: "Start from the latest good snapshot of the views and replay only the events after it (quicker; trusts that snapshot).")
    var fromSnapshot = false
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let directory = try global.open()
        let display = ProgressDisplay(enabled: !json)
        let report = try ProjectionRebuilder.rebuild(directory, verifyOnly: verifyOnly, fromSnapshot: fromSnapshot, warn: warn) { display.show($0) }
        display.finish()
        if json {
            print(
                JSONText.object([
                    ("events", .int(Int64(report.events))), ("entities", .int(Int64(report.entities))), ("seconds", .double(report.seconds)),
                    ("startedFromSnapshot", report.startedFrom.map { .int(Int64($0)) } ?? .null), ("swapped", .bool(report.swapped)),
                    ("generation", .int(Int64(report.generation))),
                    ("drifted", .bool(!report.differences.isEmpty)), ("differences", .array(report.differences.map(JSONText.string))),
                    (
                        "tables",
                        .array(report.tables.map { .object([("name", .string($0.name)), ("rows", .int(Int64($0.rows))), ("checksum", .string($0.checksum))]) })
                    ),
                ]).serialized)
        } else {
            if let index = report.startedFrom {
                print(String(format: "Started from the snapshot at log index %llu and caught up in %.1f s.", index, report.seconds))
            } else {
                print(String(format: "Replayed %d events (%d entities) in %.1f s.", report.events, report.entities, report.seconds))
            }
            print(
                Table.render(
                    header: ["TABLE", "ROWS", "CHECKSUM"], rows: report.tables.map { [$0.name, String($0.rows), String($0.checksum.prefix(16))] },
                    rightAligned: [1]))
            if report.differences.isEmpty {
                print("The live views matched the rebuilt ones.")
            } else {
                print("The live views had drifted from the log:")
                for line in report.differences { print("  " + line) }
            }
            print(report.swapped ? "Swapped in: projections generation \(report.generation)." : "Verify only: nothing was swapped.")
        }
        if verifyOnly, !report.differences.isEmpty { throw ExitCode(1) }
    }
}

/// Progress of long work on standard error: one updating line on a terminal, plain lines
/// (at most one a second) otherwise.
final class ProgressDisplay: @unchecked Sendable {
    // @unchecked: used from the one thread running the command.
    private let enabled: Bool
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private var lastPrinted = 0.0

    init(enabled: Bool) { self.enabled = enabled }

    func show(_ progress: RebuildProgress) {
        guard enabled, isTerminal || progress.elapsed - lastPrinted >= 1 || progress.done == progress.total else { return }
        lastPrinted = progress.elapsed
        let rate = progress.elapsed > 0 ? Double(progress.done) / progress.elapsed : 0
        let left = rate > 0 && progress.total > progress.done ? Double(progress.total - progress.done) / rate : 0
        let line = String(format: "%@: %d / %d (%.0f/s, %.0f s left)", progress.phase, progress.done, progress.total, rate, left)
        Output.standardError(isTerminal ? "\r\u{1B}[K" + line : line + "\n")
    }

    func finish() {
        if enabled, isTerminal { Output.standardError("\n") }
    }
}
