import ArgumentParser
import Foundation
import TallyCore
import TallyLedger
import TallyLog

/// `tally attachment add FILE` / `get DIGEST --out FILE`: receipt photos and files in this
/// replica's blob store (the same store `POST /v1/attachments` writes; no writer lock needed,
/// so they work beside a running server).
struct AttachmentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attachment", abstract: "Store a receipt photo or file, or fetch one by its digest.", subcommands: [Add.self, Get.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Store FILE (JPEG, PNG, HEIC/HEIF, WebP, GIF or PDF, at most 25 MiB); prints its digest.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The file.") var file: String
        @Flag(help: "Print {digest, size, contentType}.") var json = false

        func run() throws {
            let (info, type) = try AttachmentFiles.store(file, in: try global.open())
            print(
                json
                    ? JSONText.object([("digest", .string(info.digest)), ("size", .int(Int64(info.size))), ("contentType", .string(type))]).serialized
                    : info.digest)
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write the attachment DIGEST to FILE.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The attachment's digest (64 hex digits).") var digest: String
        @Option(help: "Where to write it.") var out: String

        func run() throws {
            let blobs = BlobStore(directory: try global.open())
            guard let _ = try blobs.size(of: digest) else { throw CLIError("this replica holds no attachment \(digest)") }
            let data = try Data(contentsOf: URL(fileURLWithPath: try blobs.file(of: digest)))
            try Output.file(data, at: out)
        }
    }
}

/// Files given on the command line, stored as attachments.
enum AttachmentFiles {
    /// The most bytes one attachment may hold (as `tally serve --max-attachment-mib` defaults).
    static let maxBytes = 25 << 20

    /// Stores the file at `path` after checking its size and type; returns it and its type.
    static func store(_ path: String, in directory: DataDirectory) throws -> (BlobInfo, String) {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw CLIError("\(path) is not a readable file") }
        guard Int(info.st_size) <= maxBytes else { throw CLIError("\(path) is larger than \(maxBytes >> 20) MiB") }
        guard let data = FileManager.default.contents(atPath: path) else { throw CLIError("cannot read \(path)") }
        guard let type = AttachmentType.sniff(data.prefix(32)) else {
            throw CLIError("\(path) is not a JPEG, PNG, HEIC/HEIF, WebP, GIF or PDF file (told by its content, not its name)")
        }
        return (try BlobStore(directory: directory).store(data, limit: maxBytes), type)
    }
}

/// `tally attachments gc`: deletes blobs no live entity has referenced for the retention period.
struct AttachmentsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attachments", abstract: "Housekeeping of the attachments' blobs.", subcommands: [GC.self])

    struct GC: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "gc",
            abstract:
                "Delete the blobs no live expense or to-do has referenced for --retention-days (counted from when gc first saw them unreferenced, and from their last upload); the audit history keeps their digests."
        )
        @OptionGroup var global: GlobalOptions
        @Option(help: "Days an unreferenced blob is kept (0 to 3650).") var retentionDays = 30
        @Flag(help: "Only say what would go.") var dryRun = false
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            guard (0...3_650).contains(retentionDays) else { throw CLIError("invalid --retention-days \(retentionDays): 0 to 3650") }
            let directory = try global.open()
            let collector = AttachmentCollector(BlobStore(directory: directory), retention: TimeInterval(retentionDays) * 86_400)
            let report = try collector.run(views: try global.openViews(), dryRun: dryRun)
            if json {
                print(
                    JSONText.object([
                        ("removed", .array(report.removed.map { .string($0.digest) })), ("dryRun", .bool(dryRun)),
                        ("bytes", .int(Int64(report.removed.reduce(0) { $0 + $1.size }))),
                        ("waiting", .int(Int64(report.waiting))), ("kept", .int(Int64(report.kept))),
                    ]).serialized)
                return
            }
            for blob in report.removed { print("\(dryRun ? "would remove" : "removed") \(blob.digest) (\(blob.size) bytes)") }
            print(
                "\(report.kept) referenced, \(report.waiting) unreferenced within the retention period, \(report.removed.count) \(dryRun ? "to remove" : "removed")"
            )
        }
    }
}
