import Crypto
import Foundation
import TallyCore
import TallyLog

/// A folder of segment files plus `manifest.json`: the events one replica lacks, carried on a
/// USB stick or through a shared folder. Export writes it; import verifies every file's
/// SHA-256 and size, every frame checksum, and every origin's sequence and hash chain before
/// anything is applied, and applies all or nothing.
public enum SegmentBundle {
    /// What a bundle holds; written last, so a bundle without it is incomplete.
    public struct Manifest: Codable, Sendable, Equatable {
        public struct File: Codable, Sendable, Equatable {
            public var name: String
            public var bytes: Int
            public var sha256: String

            public init(name: String, bytes: Int, sha256: String) {
                (self.name, self.bytes, self.sha256) = (name, bytes, sha256)
            }
        }
        public var format: String = "tally-bundle/1"
        public var fromReplica: String
        public var createdAt: String
        public var events: Int
        /// Per origin: the first and last sequence in the bundle.
        public var origins: [String: [UInt64]]
        public var files: [File]
    }

    /// What an import did.
    public struct ImportReport: Sendable {
        public var applied: Int
        public var alreadyHeld: Int
        public var fromReplica: String
    }

    /// Writes to `folder` (created, or empty) every replicated event `vector` lacks (all without one).
    ///
    /// Segments are copied byte for byte while every event so far has gone into the bundle (so
    /// its log indexes are the source's) and the segment holds only events the peer lacks — a
    /// new replica's first export is a file copy (the newest segment as far as it was written
    /// when scanned; later appends are not part of this export). From the first segment that
    /// does not qualify on, events are re-framed into new segments.
    public static func export(_ directory: DataDirectory, to folder: String, for vector: VersionVector?) throws -> Manifest {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if FileManager.default.fileExists(atPath: folder + "/manifest.json") {
            throw SyncRejection(source: folder, reason: "already holds a bundle; export into an empty folder")
        }
        let reader = directory.reader
        func lacked(_ origin: ReplicaID, _ sequence: UInt64, _ isLocalOnly: Bool) -> Bool {
            !isLocalOnly && sequence > (vector?[origin] ?? 0)
        }
        var origins: [ReplicaID: ClosedRange<UInt64>] = [:]
        var events = 0
        var copiedHead = LogHead()  // as of the last segment copied whole
        var copiedThrough: UInt64 = 0
        var endsWithCopy = false
        let names = try reader.segmentNames()
        for (position, name) in names.enumerated() where SegmentFormat.firstIndex(fromFileName: name) == copiedThrough + 1 {
            var seen: [ReplicaID: ClosedRange<UInt64>] = [:]
            var count = 0
            let copyable = try reader.copyableSegment(name, isLast: position == names.count - 1) { event in
                seen[event.origin] = (seen[event.origin]?.lowerBound ?? event.sequence)...event.sequence
                count += 1
                return lacked(event.origin, event.sequence, event.isLocalOnly)
            }
            guard let copyable else { break }
            try copyDurably(reader.directory + "/" + name, length: copyable.length, to: folder + "/" + name)
            origins.merge(seen) { earlier, later in earlier.lowerBound...later.upperBound }
            events += count
            copiedThrough = copyable.nextIndex - 1
            guard let seal = copyable.seal else {
                endsWithCopy = true  // the newest segment, copied as far as it was written: the export ends here
                break
            }
            copiedHead = seal
        }
        if !endsWithCopy {
            var writer = copiedThrough == 0 ? try SegmentFileWriter(directory: folder) : nil
            try reader.forEachEncodedEvent(from: copiedThrough + 1) { logged, bytes in
                let event = logged.event
                guard lacked(event.origin, event.sequence, event.isLocalOnly) else { return }
                if writer == nil { writer = try SegmentFileWriter(directory: folder, after: copiedHead) }
                writer!.append(bytes, of: event)
                origins[event.origin] = (origins[event.origin]?.lowerBound ?? event.sequence)...event.sequence
                events += 1
            }
            try writer?.finish()
        }
        var files: [Manifest.File] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: folder).sorted() where name.hasSuffix(".tseg") {
            let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
            files.append(Manifest.File(name: name, bytes: data.count, sha256: hex(SHA256.hash(data: data))))
        }
        let manifest = Manifest(fromReplica: directory.identity.replicaId, createdAt: ISO8601DateFormatter().string(from: Date()),
                                events: events, origins: Dictionary(uniqueKeysWithValues: origins.map { ($0.key.description, [$0.value.lowerBound, $0.value.upperBound]) }),
                                files: files)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try writeDurably(try encoder.encode(manifest), to: folder + "/manifest.json")
        return manifest
    }

    /// Verifies the bundle in `folder` against this replica's log and appends what it lacks,
    /// all or nothing. Needs the writer (so the caller holds the writer lock).
    public static func importBundle(from folder: String, into writer: LogWriter, maximumSkewMillis: UInt64) throws -> ImportReport {
        let manifest = try readVerifiedManifest(folder)
        var incoming = IncomingEvents(head: writer.head, localOrigins: [writer.localOrigin, writer.localOnlyOrigin], maximumSkewMillis: maximumSkewMillis)
        do {
            // The reader decodes and hashes (on a second thread); the chain checks run here.
            try LogReader(directory: folder).forEachEncodedEventChunk { chunk in
                for (logged, bytes) in chunk {
                    try incoming.offer(bytes, decoded: logged.event, hash: logged.hash, source: "\(folder)/\(logged.segment) offset \(logged.frameOffset)")
                }
            }
        } catch let error as LogError {
            throw SyncRejection(source: folder, reason: "\(error)")
        }
        let seen = incoming.accepted.count + incoming.alreadyHeld
        guard seen == manifest.events else {
            throw SyncRejection(source: folder, reason: "manifest lists \(manifest.events) events, the segments hold \(seen)")
        }
        if !incoming.accepted.isEmpty { try writer.appendEncoded(incoming.accepted) }
        return ImportReport(applied: incoming.accepted.count, alreadyHeld: incoming.alreadyHeld, fromReplica: manifest.fromReplica)
    }

    /// The manifest, once every file it lists is present with its size and SHA-256, and no
    /// segment file is there that it does not list.
    static func readVerifiedManifest(_ folder: String) throws -> Manifest {
        guard let data = FileManager.default.contents(atPath: folder + "/manifest.json") else {
            throw SyncRejection(source: folder, reason: "no manifest.json (not a bundle, or an export that did not finish)")
        }
        let manifest: Manifest
        do { manifest = try JSONDecoder().decode(Manifest.self, from: data) } catch {
            throw SyncRejection(source: folder + "/manifest.json", reason: "unreadable (\(error))")
        }
        guard manifest.format == "tally-bundle/1" else { throw SyncRejection(source: folder, reason: "bundle format \(manifest.format) is not one this build reads") }
        let present = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".tseg") }.sorted()
        guard present == manifest.files.map(\.name).sorted() else {
            throw SyncRejection(source: folder, reason: "segment files \(present) do not match the manifest's \(manifest.files.map(\.name))")
        }
        for file in manifest.files {
            let contents = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + file.name))
            guard contents.count == file.bytes, hex(SHA256.hash(data: contents)) == file.sha256 else {
                throw SyncRejection(source: folder + "/" + file.name, reason: "size or SHA-256 differs from the manifest (damaged or truncated in transit)")
            }
        }
        return manifest
    }

    /// Copies the first `length` bytes of a file and fsyncs the copy.
    static func copyDurably(_ source: String, length: Int, to destination: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: source))
        guard data.count >= length else { throw SyncRejection(source: source, reason: "shrank while being exported") }
        try writeDurably(data.prefix(length), to: destination)
    }

    static func hex(_ digest: SHA256.Digest) -> String { digest.map { String(format: "%02x", $0) }.joined() }

    /// SHA-256 of `data` in lowercase hex, as manifests record it.
    public static func sha256Hex(_ data: Data) -> String { hex(SHA256.hash(data: data)) }
}
