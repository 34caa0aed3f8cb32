import ArgumentParser
import Foundation
import TallyCore
import TallyLedger
import TallyLog

struct LogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log", abstract: "Read or repair the event log.", subcommands: [Dump.self, Repair.self])

    struct Dump: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print every event in log order.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "One JSON object per line.") var json = false

        func run() throws {
            let directory = try global.open()
            var rows: [[String]] = []
            try directory.reader.forEachEvent { logged in
                if json {
                    print(logged.event.json(index: logged.index, hash: logged.hash).serialized)
                } else {
                    let event = logged.event
                    rows.append([
                        String(logged.index), event.timestamp.wallTime, "\(event.origin.description.prefix(8))#\(event.sequence)",
                        event.actor, "\(event.operation) \(event.entityType)", event.entityID.description, event.changeSummary,
                    ])
                }
            }
            if !json {
                print(Table.render(header: ["INDEX", "TIME (UTC)", "ORIGIN#SEQ", "ACTOR", "OPERATION", "ENTITY", "CHANGES"], rows: rows, rightAligned: [0]))
            }
        }
    }

    struct Repair: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Cut the log at its first damaged frame, moving what follows aside (never deleting it).")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let directory = try global.open()
            let report = try Ledger.repairLog(directory, lockTimeout: global.lockTimeout)
            if json {
                print(
                    JSONText.object([
                        ("cut", .bool(report.cutSegment != nil)), ("segment", report.cutSegment.map(JSONText.string) ?? .null),
                        ("offset", report.cutOffset.map { .int(Int64($0)) } ?? .null), ("reason", report.reason.map(JSONText.string) ?? .null),
                        ("movedAside", .array(report.movedAside.map { .object([("name", .string($0.name)), ("bytes", .int(Int64($0.bytes)))]) })),
                        ("asideDirectory", report.asideDirectory.map(JSONText.string) ?? .null),
                        ("lastIndexKept", .int(Int64(report.lastIndexKept))),
                    ]).serialized)
                return
            }
            guard let segment = report.cutSegment, let offset = report.cutOffset else {
                print("The log opens cleanly; nothing was cut (\(report.lastIndexKept) events).")
                return
            }
            print("Cut the log in segment \(segment) at offset \(offset): \(report.reason ?? "")")
            for moved in report.movedAside { print("  moved aside: \(moved.name) (\(moved.bytes) bytes)") }
            print("What was cut is kept in \(report.asideDirectory ?? "?"). The log now ends at index \(report.lastIndexKept).")
        }
    }
}
