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
        /// An attachment's blob carried in `blobs/DIGEST` (absent in bundles without any).
        public struct Blob: Codable, Sendable, Equatable {
            public var digest: String
            public var bytes: Int
        }
        public var format: String = "tally-bundle/1"
        public var fromReplica: String
        public var createdAt: String
        public var events: Int
        /// Per origin: the first and last sequence in the bundle.
        public var origins: [String: [UInt64]]
        public var files: [File]
        /// The blobs the bundle's events reference, when the exporting replica held them.
        public var blobs: [Blob]?
    }

    /// What an import did.
    public struct ImportReport: Sendable {
        public var applied: Int
        public var alreadyHeld: Int
        public var fromReplica: String
        /// The imported events folded by the merge rules, when the import made an empty log:
        /// `take()` it for `Projector.catchUp(startingFrom:)`, so the first load need not read
        /// the log again and holds the only copy, which it can free early.
        public var folded: FoldedLog?
        /// Attachments' blobs the bundle carried (checked and kept; some may have been held already).
        public var blobs = 0
    }

    /// Writes to `folder` (created, or empty) every replicated event `vector` lacks (all without one).
    ///
    /// Segments are copied byte for byte while every event so far has gone into the bundle (so
    /// its log indexes are the source's) and the segment holds only events the peer lacks — a
    /// new replica's first export is a file copy (the newest segment as far as it was written
    /// when scanned; later appends are not part of this export). From the first segment that
    /// does not qualify on, events are re-framed into new segments.
    public static func export(_ directory: DataDirectory, to folder: String, for vector: VersionVector?) throws -> Manifest {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), !isFolder.boolValue {
            throw SyncRejection(source: folder, reason: "is a file, not a folder; export into an empty folder")
        }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if FileManager.default.fileExists(atPath: folder + "/manifest.json") {
            throw SyncRejection(source: folder, reason: "already holds a bundle; export into an empty folder")
        }
        var contents = ExportedEvents(vector: vector)
        let copied = try copyWholeSegments(of: directory.reader, to: folder, into: &contents)
        if !copied.endsWithNewest { try reframeEvents(of: directory.reader, after: copied, to: folder, into: &contents) }
        // Copied files were hashed from the bytes written; re-framed ones are read back.
        var files = copied.files
        let hashed = Set(files.map(\.name))
        for name in try FileManager.default.contentsOfDirectory(atPath: folder).sorted() where name.hasSuffix(".tseg") && !hashed.contains(name) {
            files.append(listing(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)), as: name))
        }
        files.sort { $0.name < $1.name }
        let blobs = try exportBlobs(referencedBy: directory, lacking: vector, to: folder)
        let manifest = Manifest(
            fromReplica: directory.identity.replicaId, createdAt: ISO8601DateFormatter().string(from: Date()),
            events: contents.count, origins: contents.originsForManifest, files: files, blobs: blobs.isEmpty ? nil : blobs)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try writeDurably(try encoder.encode(manifest), to: folder + "/manifest.json")
        return manifest
    }

    /// Copies into `folder/blobs/` (durably) the blobs that the events `vector` lacks reference
    /// and this replica holds. Reads the events only when it holds any blob at all.
    static func exportBlobs(referencedBy directory: DataDirectory, lacking vector: VersionVector?, to folder: String) throws -> [Manifest.Blob] {
        let store = BlobStore(directory: directory)
        guard !(try store.all().isEmpty) else { return [] }
        var digests: Set<String> = []
        try directory.reader.forEachEvent { logged in
            let event = logged.event
            guard !event.isLocalOnly, event.sequence > (vector?[event.origin] ?? 0), case .strings(let list)? = event.properties[.attachments] else { return }
            digests.formUnion(list)
        }
        var blobs: [Manifest.Blob] = []
        for digest in digests.sorted() {
            guard let size = try store.size(of: digest) else { continue }  // not arrived here either: the reader fetches it elsewhere
            try FileManager.default.createDirectory(atPath: folder + "/blobs", withIntermediateDirectories: true)
            _ = try copyDurably(try store.file(of: digest), length: size, to: folder + "/blobs/" + digest)
            blobs.append(Manifest.Blob(digest: digest, bytes: size))
        }
        return blobs
    }

    /// Checks every blob the manifest lists (a regular file of its size, read in bounded pieces,
    /// hashing to its name) into the store's incoming folder, before anything is applied; the
    /// caller keeps them (`finish`) once the events are in, or drops them.
    static func stageBlobs(_ manifest: Manifest, from folder: String, into store: BlobStore) throws -> [BlobWriter] {
        var staged: [BlobWriter] = []
        // Each size checked before it is added: the total stays below the limit plus one
        // blob's, so no manifest's sizes can overflow it.
        var listed = 0
        for blob in manifest.blobs ?? [] {
            guard BlobStore.isDigest(blob.digest), blob.bytes >= 0, blob.bytes <= maxFileBytes else {
                throw SyncRejection(
                    source: folder, reason: "the manifest lists a blob '\(blob.digest.prefix(80))' of \(blob.bytes) bytes, which no bundle holds")
            }
            listed += blob.bytes
            guard listed <= maxBundleBlobBytes else {
                throw SyncRejection(source: folder, reason: "the bundle's blobs total more than \(maxBundleBlobBytes) bytes, what a bundle may carry")
            }
        }
        for blob in manifest.blobs ?? [] {
            let path = folder + "/blobs/" + blob.digest
            let writer = try store.writer(limit: blob.bytes)
            try readBounded(path, expectedBytes: blob.bytes, limit: maxFileBytes) { piece in try writer.write(piece) }
            guard writer.digest == blob.digest else {
                throw SyncRejection(source: path, reason: "the blob's bytes hash to \(writer.digest), not its name (damaged or truncated in transit)")
            }
            try writer.seal()  // no descriptor held per blob while the events are checked
            staged.append(writer)
        }
        return staged
    }

    /// The most bytes of blobs one bundle may carry (they are staged on disk before the events are checked).
    public static let maxBundleBlobBytes = 64 << 30

    /// Which events an export takes (the ones `vector` lacks, never local-only ones), and what it took.
    struct ExportedEvents {
        let vector: VersionVector?
        /// Per origin, the first and last sequence taken, except the origin of the latest run.
        private var earlierRuns: [ReplicaID: ClosedRange<UInt64>] = [:]
        /// The origin of the events taken last and its range so far: a log holds long runs of
        /// one origin, which then cost no dictionary lookup per event.
        private var latestRun: (origin: ReplicaID, range: ClosedRange<UInt64>)?
        private(set) var count = 0

        init(vector: VersionVector?) { self.vector = vector }

        func lacks(_ origin: ReplicaID, _ sequence: UInt64, isLocalOnly: Bool) -> Bool {
            !isLocalOnly && sequence > (vector?[origin] ?? 0)
        }

        /// Whether a signature record goes along: a head that covers something the other side
        /// lacks; a rotation unless the other side holds events signed after it.
        func wants(_ record: SignatureRecord) -> Bool {
            switch record {
            case .head(let signed): signed.sequence > (vector?[signed.origin] ?? 0)
            case .rotation(let rotation): rotation.afterSequence >= (vector?[rotation.origin] ?? 0)
            }
        }

        mutating func add(_ origin: ReplicaID, _ sequence: UInt64) {
            count += 1
            if latestRun?.origin == origin {
                latestRun!.range = latestRun!.range.lowerBound...sequence
                return
            }
            if let run = latestRun { earlierRuns[run.origin] = run.range }
            latestRun = (origin, (earlierRuns.removeValue(forKey: origin)?.lowerBound ?? sequence)...sequence)
        }

        /// Per origin: the first and last sequence exported.
        var originsForManifest: [String: [UInt64]] {
            var origins = earlierRuns
            if let run = latestRun { origins[run.origin] = run.range }
            return Dictionary(uniqueKeysWithValues: origins.map { ($0.key.description, [$0.value.lowerBound, $0.value.upperBound]) })
        }
    }

    /// How far the copied segments reach.
    struct CopiedSegments {
        /// The head recorded by the last sealed segment copied (empty if none).
        var head = LogHead()
        /// The log index of the last event copied (0 if none).
        var through: UInt64 = 0
        /// The newest segment was copied: the export ends there.
        var endsWithNewest = false
        /// The copied files as the manifest lists them.
        var files: [Manifest.File] = []
    }

    /// Copies segment files, in order, while each holds only events the export takes — as far
    /// as the last segment by whose end a signed head covers every event taken (a batch's head
    /// may stand in the segment after its events; events whose head never came are re-framed,
    /// and wait there).
    static func copyWholeSegments(of reader: LogReader, to folder: String, into contents: inout ExportedEvents) throws -> CopiedSegments {
        // Which segments to copy, scanned first: the first `covered` of those scanned.
        var scanned: [(name: String, segment: LogReader.CopyableSegment, contents: ExportedEvents)] = []
        var covered = 0
        var through: UInt64 = 0
        var lastTaken: [ReplicaID: UInt64] = [:]
        var signedThrough: [ReplicaID: UInt64] = [:]
        var taken = contents
        let names = try reader.segmentNames()
        for (position, name) in names.enumerated() where SegmentFormat.firstIndex(fromFileName: name) == through + 1 {
            let copyable = try reader.copyableSegment(
                name, isLast: position == names.count - 1,
                signatures: { records in
                    for case .head(let signed) in records { signedThrough[signed.origin] = max(signedThrough[signed.origin] ?? 0, signed.sequence) }
                }
            ) { event in
                taken.add(event.origin, event.sequence)
                lastTaken[event.origin] = event.sequence
                return taken.lacks(event.origin, event.sequence, isLocalOnly: event.isLocalOnly)
            }
            guard let copyable else { break }
            scanned.append((name, copyable, taken))
            through = copyable.nextIndex - 1
            if lastTaken.allSatisfy({ $0.value <= signedThrough[$0.key] ?? 0 }) { covered = scanned.count }
            if copyable.seal == nil { break }
        }
        var copied = CopiedSegments()
        for (name, segment, takenThrough) in scanned.prefix(covered) {
            copied.files.append(try copyDurably(reader.directory + "/" + name, length: segment.length, to: folder + "/" + name))
            contents = takenThrough
            copied.through = segment.nextIndex - 1
            guard let seal = segment.seal else {
                copied.endsWithNewest = true
                break
            }
            copied.head = seal
        }
        return copied
    }

    /// Re-frames the events after the copied segments that the export takes into new segments,
    /// each just before the signed head that covers it (`HeldUntilSigned`: none goes unsigned).
    static func reframeEvents(of reader: LogReader, after copied: CopiedSegments, to folder: String, into contents: inout ExportedEvents) throws {
        var writer = copied.through == 0 ? try SegmentFileWriter(directory: folder) : nil  // an empty export still has a segment
        enum Waiting {
            case event(Event, [UInt8])
            case rotation(SignatureRecord)
        }
        var unsigned = HeldUntilSigned<Waiting>()
        try reader.forEachEncodedEvent(
            from: copied.through + 1,
            signatures: { records, _, _ in
                var wanted: [SignatureRecord] = []  // written together, after what was released before them
                for record in records {
                    var released: [Waiting] = []
                    switch record {
                    case .head(let signed): released = unsigned.release(by: signed)
                    case .rotation(let rotation) where unsigned.isHolding(rotation.origin):
                        if contents.wants(record) { unsigned.hold(rotation: .rotation(record), origin: rotation.origin, afterSequence: rotation.afterSequence) }
                        continue
                    case .rotation: break
                    }
                    if released.isEmpty && !contents.wants(record) { continue }
                    if writer == nil { writer = try SegmentFileWriter(directory: folder, after: copied.head) }
                    if !released.isEmpty, !wanted.isEmpty {
                        writer!.append(wanted)
                        wanted = []
                    }
                    for waiting in released {
                        switch waiting {
                        case .event(let event, let bytes):
                            bytes.withUnsafeBytes { writer!.append($0, of: event) }
                            contents.add(event.origin, event.sequence)
                        case .rotation(let rotation): writer!.append([rotation])
                        }
                    }
                    if contents.wants(record) { wanted.append(record) }
                }
                if !wanted.isEmpty { writer!.append(wanted) }
            }
        ) { logged, bytes in
            let event = logged.event
            guard contents.lacks(event.origin, event.sequence, isLocalOnly: event.isLocalOnly) else { return }
            unsigned.hold(.event(event, Array(bytes)), origin: event.origin, sequence: event.sequence, bytes: bytes.count)
        }
        unsigned.finish()
        try writer?.finish()
    }

    /// Verifies the bundle in `folder` against this replica's log and appends what it lacks,
    /// all or nothing. Needs the writer (so the caller holds the writer lock).
    ///
    /// A replica whose log is still empty (a new one's first import) takes the bundle's segment
    /// files as they are (`adoptIntoEmptyLog`); otherwise the events it lacks are appended.
    ///
    /// The blobs it carries are checked first (each a regular file of its listed size hashing to
    /// its name) and kept only once the events are in: a bad blob refuses the whole bundle.
    public static func importBundle(from folder: String, into writer: LogWriter, maximumSkewMillis: UInt64) throws -> ImportReport {
        let manifest = try readManifest(folder)
        let blobs = try stageBlobs(manifest, from: folder, into: BlobStore(logDirectory: writer.directory))
        defer { for blob in blobs { blob.abort() } }
        var report = try importEvents(folder, manifest, into: writer, maximumSkewMillis: maximumSkewMillis)
        for blob in blobs { _ = try blob.finish() }
        report.blobs = blobs.count
        return report
    }

    /// The events part of `importBundle`.
    static func importEvents(_ folder: String, _ manifest: Manifest, into writer: LogWriter, maximumSkewMillis: UInt64) throws -> ImportReport {
        if writer.head.lastIndex == 0, let report = try adoptIntoEmptyLog(folder, manifest, writer, maximumSkewMillis) { return report }
        let staging = try stageCheckedFiles(manifest, from: folder, for: writer, durably: false)
        defer { try? FileManager.default.removeItem(atPath: staging) }
        var incoming = try IncomingEvents(receivingInto: writer, maximumSkewMillis: maximumSkewMillis)
        var order = BundleOrder(source: folder)
        try rejectingLogErrors(from: folder) {
            // The reader decodes and hashes (on a second thread); the chain checks run here.
            try LogReader(directory: staging).forEachEntryChunk(checkingSeals: false, keepingBytes: true) { chunk in
                for entry in chunk {
                    switch entry {
                    case .event(let logged, let bytes):
                        try order.check(logged)
                        try incoming.offer(bytes ?? [], decoded: logged.event, hash: logged.hash, source: order.place(of: logged))
                    case .signatures(let records, let segment, let offset):
                        for record in records { try incoming.offer(record, source: "\(folder)/\(segment) offset \(offset)") }
                    }
                }
            }
        }
        try order.checkCount(incoming, against: manifest)
        try incoming.finishDelivery(source: folder)
        let covered = try incoming.takeCovered(source: folder)
        if !covered.isEmpty { try covered.append(to: writer) }
        return ImportReport(applied: incoming.acceptedCount, alreadyHeld: incoming.alreadyHeld, fromReplica: manifest.fromReplica)
    }

    /// The first import into an empty log: the bundle's segment files are checked against the
    /// manifest as they are copied into the writer's adoption folder, and verified there (what
    /// is adopted is exactly what was checked: frame checksums and indexes, seals, every
    /// event's decode, hash chain, sequence and clock),
    /// and renamed into the log — no re-framing or compressing. A bundle is a log of its own
    /// numbered from 1, so when every event in it is accepted it is this replica's log as the
    /// event-by-event path would have made it. The events are folded while they are checked
    /// (`ImportReport.folded`). Returns nil (nothing changed) when the bundle holds an event
    /// twice or another append got in first; the caller then appends event by event. Throws
    /// the rejection, changing nothing, for a bad bundle.
    static func adoptIntoEmptyLog(_ folder: String, _ manifest: Manifest, _ writer: LogWriter, _ maximumSkewMillis: UInt64) throws -> ImportReport? {
        let staging = try stageCheckedFiles(manifest, from: folder, for: writer, durably: true)
        defer { try? FileManager.default.removeItem(atPath: staging) }
        var incoming = try IncomingEvents(receivingInto: writer, maximumSkewMillis: maximumSkewMillis)
        incoming.checksEveryRecord = true  // the files' signatures frames become this log's own
        var order = BundleOrder(source: folder)
        var folded = FoldedLog()
        var latest = HybridTimestamp.zero
        try rejectingLogErrors(from: folder) {
            try LogReader(directory: staging).forEachEntryChunk(checkingSeals: true, keepingBytes: false) { chunk in
                for entry in chunk {
                    switch entry {
                    case .event(let logged, _):
                        try order.check(logged)
                        try incoming.check(logged.event, hash: logged.hash, source: order.place(of: logged))
                        folded.apply(logged.event)
                        if logged.event.timestamp > latest { latest = logged.event.timestamp }
                    case .signatures(let records, let segment, let offset):
                        for record in records { try incoming.offer(record, source: "\(folder)/\(segment) offset \(offset)") }
                    }
                }
            }
        }
        try order.checkCount(incoming, against: manifest)
        guard incoming.alreadyHeld == 0 else { return nil }
        try incoming.finishDelivery(source: folder)
        // The files keep their own signatures frames; the pins they establish are recorded first.
        try OriginKeyStore(logDirectory: writer.directory).record(try incoming.takeCovered(source: folder).pins)
        // The log's head once the files are its own: the chains as checked, from an empty log.
        var head = LogHead()
        (head.lastIndex, head.maxTimestamp, head.chains) = (folded.lastIndex, latest, incoming.chains)
        guard try writer.adoptSegments(verifiedHead: head) else { return nil }
        return ImportReport(applied: incoming.acceptedCount, alreadyHeld: 0, fromReplica: manifest.fromReplica, folded: folded)
    }

    /// Checks that a bundle's events carry the log indexes 1, 2, 3, … and that the manifest
    /// counted them all; names places in rejections after the bundle folder.
    struct BundleOrder {
        let source: String
        var nextIndex: UInt64 = 1

        func place(of logged: LoggedEvent) -> String { "\(source)/\(logged.segment) offset \(logged.frameOffset)" }

        mutating func check(_ logged: LoggedEvent) throws {
            guard logged.index == nextIndex else {
                throw SyncRejection(source: place(of: logged), reason: "log index \(logged.index) follows \(nextIndex - 1) (a segment is missing)")
            }
            nextIndex += 1
        }

        func checkCount(_ incoming: IncomingEvents, against manifest: Manifest) throws {
            let seen = incoming.acceptedCount + incoming.alreadyHeld
            guard seen == manifest.events else {
                throw SyncRejection(source: source, reason: "manifest lists \(manifest.events) events, the segments hold \(seen)")
            }
        }
    }

    /// Runs `body`, turning a damaged file (`LogError`) into a rejection of the bundle.
    static func rejectingLogErrors(from folder: String, _ body: () throws -> Void) throws {
        do { try body() } catch let error as LogError {
            throw SyncRejection(source: folder, reason: "\(error)")
        }
    }

    /// The manifest, once every file it lists is present and no segment file is there that it
    /// does not list (each file's size and SHA-256 are checked as it is read: `readListedFile`).
    static func readManifest(_ folder: String) throws -> Manifest {
        guard (try? regularFileSize(folder + "/manifest.json")) != nil else {
            throw SyncRejection(source: folder, reason: "no manifest.json (not a bundle, or an export that did not finish)")
        }
        let data = try readBounded(folder + "/manifest.json", expectedBytes: nil, limit: 1 << 20).data
        let manifest: Manifest
        do { manifest = try JSONDecoder().decode(Manifest.self, from: data) } catch {
            throw SyncRejection(source: folder + "/manifest.json", reason: "unreadable (\(error))")
        }
        guard manifest.format == "tally-bundle/1" else {
            throw SyncRejection(source: folder, reason: "bundle format \(manifest.format) is not one this build reads")
        }
        for file in manifest.files where SegmentFormat.firstIndex(fromFileName: file.name) == nil || file.name.contains("/") {
            throw SyncRejection(source: folder, reason: "the manifest lists '\(file.name)', which is not a segment file name")
        }
        let present = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".tseg") }.sorted()
        guard present == manifest.files.map(\.name).sorted() else {
            throw SyncRejection(source: folder, reason: "segment files \(present) do not match the manifest's \(manifest.files.map(\.name))")
        }
        let blobFiles = ((try? FileManager.default.contentsOfDirectory(atPath: folder + "/blobs")) ?? []).sorted()
        guard blobFiles == (manifest.blobs ?? []).map(\.digest).sorted() else {
            throw SyncRejection(
                source: folder + "/blobs",
                reason: "the blob files do not match the manifest's list (\(blobFiles.count) present, \((manifest.blobs ?? []).count) listed)")
        }
        return manifest
    }

    /// Copies the bundle's files into a fresh folder beside the writer's log, each read once and
    /// checked against the manifest (`readListedFile`); returns the folder. Events are then read
    /// from these copies only, never from the bundle again: a file swapped after its check (a
    /// link, a FIFO, a huge file) is never read. `durably` fsyncs them, for copies to be adopted.
    static func stageCheckedFiles(_ manifest: Manifest, from folder: String, for writer: LogWriter, durably: Bool) throws -> String {
        let staging = try writer.makeAdoptionFolder()
        do {
            for file in manifest.files {
                let contents = try readListedFile(file, in: folder), path = staging + "/" + file.name
                if durably {
                    try writeDurably(contents, to: path)
                } else if !FileManager.default.createFile(atPath: path, contents: contents) {
                    throw LogError.io(operation: "create", path: path, errno: errno)
                }
            }
        } catch {
            try? FileManager.default.removeItem(atPath: staging)  // a refused bundle leaves nothing behind
            throw error
        }
        return staging
    }

    /// The largest file a bundle may list (a log's segments are 16 MiB unless configured larger).
    public static let maxFileBytes = 1 << 30

    /// A bundle file's bytes, once they match the manifest's size and SHA-256. Its type and size
    /// are checked before a byte is read (a regular file, not a link; the size the manifest
    /// says, at most `maxFileBytes`), and it is read in bounded pieces: a hostile bundle cannot
    /// make this replica read a huge sparse file or follow a link out of the folder.
    static func readListedFile(_ file: Manifest.File, in folder: String) throws -> Data {
        let path = folder + "/" + file.name
        guard file.bytes >= 0, file.bytes <= maxFileBytes else {
            throw SyncRejection(source: path, reason: "the manifest says \(file.bytes) bytes; a bundle file holds at most \(maxFileBytes)")
        }
        let (contents, digest) = try readBounded(path, expectedBytes: file.bytes, limit: maxFileBytes)
        guard hex(digest) == file.sha256 else {
            throw SyncRejection(source: path, reason: "size or SHA-256 differs from the manifest (damaged or truncated in transit)")
        }
        return contents
    }

    /// The size of the regular file at `path` (not following a link); throws a rejection otherwise.
    static func regularFileSize(_ path: String) throws -> Int {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw SyncRejection(source: path, reason: "missing (\(String(cString: strerror(errno))))") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw SyncRejection(source: path, reason: "not a regular file (a link or a device); refused") }
        return Int(info.st_size)
    }

    /// Reads a regular file (no link followed) of `expectedBytes` (if given), at most `limit`,
    /// in 1 MiB pieces, hashing as it goes.
    static func readBounded(_ path: String, expectedBytes: Int?, limit: Int) throws -> (data: Data, digest: SHA256.Digest) {
        var data = Data()
        var hasher = SHA256()
        try readBounded(path, expectedBytes: expectedBytes, limit: limit) { piece in
            data.append(contentsOf: piece)
            hasher.update(data: piece)
        }
        return (data, hasher.finalize())
    }

    /// The same checks, handing the file to `body` in pieces of at most 1 MiB (never whole).
    static func readBounded(_ path: String, expectedBytes: Int?, limit: Int, _ body: (ArraySlice<UInt8>) throws -> Void) throws {
        let size = try regularFileSize(path)
        guard size <= limit, expectedBytes.map({ $0 == size }) ?? true else {
            throw SyncRejection(source: path, reason: "size or SHA-256 differs from the manifest (damaged or truncated in transit): \(size) bytes")
        }
        // O_NONBLOCK: a FIFO swapped in after the check cannot hang the import; fstat checks what was opened.
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw SyncRejection(source: path, reason: "cannot be opened (\(String(cString: strerror(errno))))") }
        defer { close(fd) }
        var opened = stat()
        guard fstat(fd, &opened) == 0, opened.st_mode & S_IFMT == S_IFREG, Int(opened.st_size) == size else {
            throw SyncRejection(source: path, reason: "changed while being checked; refused")
        }
        var total = 0
        var piece = [UInt8](repeating: 0, count: 1 << 20)
        while total <= size {
            let count = piece.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw SyncRejection(source: path, reason: "read failed (\(String(cString: strerror(errno))))") }
            if count == 0 { break }
            total += count
            guard total <= size else { break }
            try body(piece[..<count])
        }
        guard total == size else { throw SyncRejection(source: path, reason: "changed size while being read; refused") }
    }

    /// Copies the first `length` bytes of a file and fsyncs the copy; returns the copy's manifest entry.
    static func copyDurably(_ source: String, length: Int, to destination: String) throws -> Manifest.File {
        let data = try Data(contentsOf: URL(fileURLWithPath: source))
        guard data.count >= length else { throw SyncRejection(source: source, reason: "shrank while being exported") }
        let copy = data.prefix(length)
        try writeDurably(copy, to: destination)
        return listing(copy, as: (destination as NSString).lastPathComponent)
    }

    /// A file's manifest entry: its name, size and SHA-256.
    static func listing(_ contents: Data, as name: String) -> Manifest.File {
        Manifest.File(name: name, bytes: contents.count, sha256: hex(SHA256.hash(data: contents)))
    }

    static func hex(_ digest: SHA256.Digest) -> String { Hex.lowercase(digest) }

    /// SHA-256 of `data` in lowercase hex, as manifests record it.
    public static func sha256Hex(_ data: Data) -> String { hex(SHA256.hash(data: data)) }
}
