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
            abstract:
                "Check every checksum, every origin's sequence and hash chain, and every signature (who wrote each origin's events); exit 1 on any problem.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false
        @Flag(help: "Also re-hash every attachment's blob and name the referenced ones that are missing.") var attachments = false

        func run() throws {
            let directory = try global.open()
            var report = try Ledger.verify(directory) { done in
                if !json { Output.standardError("verified \(done) events…\n") }
            }
            if attachments {
                let blobs = try global.openViews().verifyAttachments()
                for digest in blobs.damaged {
                    report.findings.append(
                        VerificationFinding(segment: "blobs", offset: 0, event: digest, problem: "the attachment's bytes no longer hash to its name (damaged)"))
                }
                for digest in blobs.missing {
                    report.findings.append(
                        VerificationFinding(
                            segment: "blobs", offset: 0, event: digest, problem: "referenced by a live entity but not held (not arrived yet, or lost)"))
                }
                if !json { Output.standardError("checked \(blobs.checked) attachments\n") }
            }
            if json {
                print(
                    JSONText.object([
                        ("intact", .bool(report.findings.isEmpty)), ("events", .int(Int64(report.events))),
                        ("origins", .int(Int64(report.origins))), ("segments", .int(Int64(report.segments))),
                        ("tail", report.tail.map(JSONText.string) ?? .null),
                        (
                            "authorship",
                            .array(
                                report.authorship.map { entry in
                                    .object([
                                        ("origin", .string(entry.origin.description)), ("keys", .array(entry.keys.map { .string($0.description) })),
                                        ("signedThrough", .int(Int64(clamping: entry.signedThrough))),
                                        ("lastSequence", .int(Int64(clamping: entry.lastSequence))),
                                    ])
                                })
                        ),
                        (
                            "findings",
                            .array(
                                report.findings.map { finding in
                                    .object([
                                        ("segment", .string(finding.segment)), ("offset", .int(Int64(finding.offset))),
                                        ("event", finding.event.map(JSONText.string) ?? .null), ("problem", .string(finding.problem)),
                                    ])
                                })
                        ),
                    ]).serialized)
            } else if report.findings.isEmpty {
                print("intact: \(report.events) events, \(report.origins) origins, \(report.segments) segments")
                for entry in report.authorship { print(Self.describe(entry, own: directory.identity.origin)) }
                if let tail = report.tail { print("note: \(tail)") }
            } else {
                for finding in report.findings { print("TAMPERED OR DAMAGED: \(finding)") }
            }
            if !report.findings.isEmpty { throw ExitCode(1) }
        }

        /// "origin … (this replica): #1…#N signed by key …", and what is not signed.
        static func describe(_ entry: OriginAuthorship, own: ReplicaID) -> String {
            let name = "origin \(entry.origin)" + (entry.origin == own ? " (this replica)" : "")
            guard let key = entry.keys.last else {
                return "\(name): #1…#\(entry.lastSequence) not signed (written before signing; the writer signs its chain when it next opens)"
            }
            let keys = entry.keys.count > 1 ? "keys \(entry.keys.map(\.description).joined(separator: " → "))" : "key \(key)"
            var line = "\(name): #1…#\(entry.signedThrough) signed by \(keys)"
            if entry.signedThrough < entry.lastSequence { line += "; #\(entry.signedThrough + 1)…#\(entry.lastSequence) not signed yet" }
            return line
        }
    }

    struct History: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every event of one entity, oldest first: who, when, what changed.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var asOf: AsOfOption
        @Argument(help: "An expense, category or to-do id, or a setting key.") var id: String
        @Flag(help: "One JSON object: events and mergedInto, as GET /v1/audit/{id} answers.") var json = false

        func run() throws {
            let trail = try asOf.openViews(global).audit(EntityID(parsing: id))
            guard !trail.events.isEmpty else { throw CLIError("no events for \(id) in this replica's log") }
            let (events, merge) = trail
            if json {
                print(LedgerViews.auditJSON(trail).serialized)
                return
            }
            defer {
                if let merge { print("\nmerged into category \(merge.winnerID): \(merge.reason); expenses and sub-categories show under it") }
            }
            print(
                Table.render(
                    header: ["TIME (UTC)", "ORIGIN#SEQ", "ACTOR", "OPERATION", "CHANGES"],
                    rows: events.map { logged in
                        let event = logged.event
                        return [
                            event.timestamp.wallTime, "\(event.origin.description.prefix(8))#\(event.sequence)",
                            event.actor, event.operation.description, event.changeSummary,
                        ]
                    }))
        }
    }
}
