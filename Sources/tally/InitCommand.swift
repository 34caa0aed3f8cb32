import ArgumentParser
import Foundation
import TallyCore
import TallyLog
import TallyStore

struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "init", abstract: "Create a new replica in the data directory.")

    @OptionGroup var global: GlobalOptions
    @Option(help: "A name for this replica (default: the host name).") var name: String?
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let directory = try DataDirectory.create(path: global.resolvedPath, name: name ?? ProcessInfo.processInfo.hostName)
        // Start the log so that status and readers find a segment from the first moment.
        try directory.openWriter(configuration: global.logConfiguration).close()
        if json {
            print(
                JSONText.object([
                    ("replicaId", .string(directory.identity.replicaId)), ("name", .string(directory.identity.name)),
                    ("dataDir", .string(directory.path)),
                ]).serialized)
        } else {
            print("Initialised replica \(directory.identity.replicaId) (\(directory.identity.name)) in \(directory.path)")
        }
    }
}

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show the replica's id and the size of its log.")

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let directory = try global.open()
        let stats = try directory.reader.statistics()
        // Where the views stand, without moving them (status must not change anything).
        let projected = ProjectionDatabase.peekCheckpoint(directory)
        let ratio = (stats.compressionRatio * 100).rounded() / 100
        let blobs = BlobStore(directory: directory)
        let held = try blobs.all()
        let missing = try ProjectionDatabase.peekReferencedAttachments(directory).filter { try blobs.size(of: $0) == nil }.count
        if json {
            print(
                JSONText.object([
                    ("replicaId", .string(directory.identity.replicaId)), ("name", .string(directory.identity.name)),
                    ("dataDir", .string(directory.path)), ("events", .int(Int64(stats.events))),
                    ("segments", .int(Int64(stats.segments))), ("sealedSegments", .int(Int64(stats.sealedSegments))),
                    ("bytesOnDisk", .int(Int64(stats.bytesOnDisk))), ("encodedBytes", .int(Int64(stats.rawBytes))),
                    ("compressionRatio", .double(ratio)), ("projectedIndex", .int(Int64(projected))),
                    ("attachments", .int(Int64(held.count))), ("attachmentBytes", .int(Int64(held.reduce(0) { $0 + $1.size }))),
                    ("missingAttachments", .int(Int64(missing))),
                ]).serialized)
        } else {
            print(
                Table.keyValue([
                    ("replica", "\(directory.identity.replicaId) (\(directory.identity.name))"),
                    ("data dir", directory.path),
                    ("events", String(stats.events)),
                    ("segments", "\(stats.segments) (\(stats.sealedSegments) sealed)"),
                    ("bytes on disk", String(stats.bytesOnDisk)),
                    ("compression", String(format: "%.2f× (%d encoded bytes)", stats.compressionRatio, stats.rawBytes)),
                    ("views", "projected up to event \(projected) of \(stats.events)"),
                    ("attachments", "\(held.count) (\(held.reduce(0) { $0 + $1.size }) bytes); \(missing) referenced but not arrived yet"),
                ]))
        }
    }
}
