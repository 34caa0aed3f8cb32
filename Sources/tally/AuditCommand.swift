import ArgumentParser
import Foundation
import TallyCore
import TallyLog
import TallyLedger

struct AuditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit", abstract: "Check the log's integrity, or show an entity's history.",
        subcommands: [Verify.self, History.self])

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check every checksum and every origin's sequence and hash chain; exit 1 on any problem.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let directory = try global.open()
            let report = try LogVerifier.verify(directory: directory.logPath) { done in
                if !json { FileHandle.standardError.write(Data("verified \(done) events…\n".utf8)) }
            }
            if json {
                print(JSONText.object([
                    ("intact", .bool(report.findings.isEmpty)), ("events", .int(Int64(report.events))),
                    ("origins", .int(Int64(report.origins))), ("segments", .int(Int64(report.segments))),
                    ("tail", report.tail.map(JSONText.string) ?? .null),
                    ("findings", .array(report.findings.map { finding in
                        .object([("segment", .string(finding.segment)), ("offset", .int(Int64(finding.offset))),
                                 ("event", finding.event.map(JSONText.string) ?? .null), ("problem", .string(finding.problem))])
                    })),
                ]).serialized)
            } else if report.findings.isEmpty {
                print("intact: \(report.events) events, \(report.origins) origins, \(report.segments) segments")
                if let tail = report.tail { print("note: \(tail)") }
            } else {
                for finding in report.findings { print("TAMPERED OR DAMAGED: \(finding)") }
            }
            if !report.findings.isEmpty { throw ExitCode(1) }
        }
    }

    struct History: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every event of one entity, oldest first: who, when, what changed.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "An expense, category or to-do id, or a setting key.") var id: String
        @Flag(help: "One JSON object: events and mergedInto, as GET /v1/audit/{id} answers.") var json = false

        func run() throws {
            let trail = try global.openViews().audit(EntityID(parsing: id))
            guard !trail.events.isEmpty else { throw CLIError("no events for \(id) in this replica's log") }
            let (events, merge) = trail
            if json {
                print(LedgerViews.auditJSON(trail).serialized)
                return
            }
            defer {
                if let merge { print("\nmerged into category \(merge.winnerID): \(merge.reason); expenses and sub-categories show under it") }
            }
            print(Table.render(
                header: ["TIME (UTC)", "ORIGIN#SEQ", "ACTOR", "OPERATION", "CHANGES"],
                rows: events.map { logged in
                    let event = logged.event
                    return [event.timestamp.wallTime, "\(event.origin.description.prefix(8))#\(event.sequence)",
                            event.actor, event.operation.description, event.changeSummary]
                }))
        }
    }
}
