import Crypto
import Foundation
import TallyCore

/// What a stored blob is: its SHA-256 (lowercase hex) and size.
public struct BlobInfo: Sendable, Equatable {
    public var digest: String
    public var size: Int

    public init(digest: String, size: Int) {
        (self.digest, self.size) = (digest, size)
    }
}

/// Why a blob could not be stored or read.
public enum BlobError: Error, Sendable, CustomStringConvertible, Equatable {
    /// More bytes than the limit arrived (nothing was stored).
    case tooLarge(limit: Int)
    /// Storing it would take the ledger's blobs past its quota (nothing was stored).
    case overQuota(quota: Int)
    /// Not a SHA-256 digest in lowercase hex.
    case invalidDigest(String)
    /// The bytes do not hash to the digest they were offered as.
    case digestMismatch(expected: String, actual: String)

    public var description: String {
        switch self {
        case .tooLarge(let limit): "the attachment is larger than \(limit) bytes"
        case .overQuota(let quota): "storing it would take this ledger's attachments past their quota of \(quota) bytes"
        case .invalidDigest(let text): "'\(text.prefix(80))' is not an attachment digest (64 lowercase hex digits of SHA-256)"
        case .digestMismatch(let expected, let actual): "the bytes offered as \(expected) hash to \(actual) (damaged or truncated)"
        }
    }
}

/// A data directory's attachments, content-addressed: `blobs/ab/cdef…` holds the bytes whose
/// SHA-256 is `abcdef…`, so the same bytes attached twice are stored once, and a blob's name
/// proves its content. A blob is written to `blobs/incoming/`, fsynced, renamed into place and
/// its directory fsynced: a kill leaves either the whole blob or none (leftovers in `incoming/`
/// are removed when the store next opens for writing).
///
/// With an `archive` (a hosted ledger on a cluster), a blob is archived before it becomes
/// visible here, removed from the archive with its file, and brought back from the archive by
/// `fetch` on a node that does not hold it.
public struct BlobStore: Sendable {
    /// `DATA_DIR/blobs`.
    public let path: String
    /// Where every blob goes before it is held here, if anywhere (`BlobArchive`).
    public let archive: (any BlobArchive)?
    /// The most bytes all blobs may hold together, asked at each new blob (an operator may
    /// change it while the store is in use); nil answers: no limit. Blobs brought back from the
    /// archive (`fetch`) are the ledger's own and count toward it without being refused.
    public let quota: @Sendable () -> Int?

    public init(directory: DataDirectory, archive: (any BlobArchive)? = nil, quota: @escaping @Sendable () -> Int? = { nil }) {
        (path, self.archive, self.quota) = (directory.path + "/blobs", archive, quota)
    }

    /// The store of the data directory whose log is `logDirectory`.
    public init(logDirectory: String) { (path, archive, quota) = ((logDirectory as NSString).deletingLastPathComponent + "/blobs", nil, { nil }) }

    /// The blobs in the folder `path`.
    public init(path: String, archive: (any BlobArchive)? = nil) { (self.path, self.archive, quota) = (path, archive, { nil }) }

    /// The same folder without its archive: for blobs any node derives again (thumbnails), and
    /// for those brought from the archive, which holds them already.
    public var local: BlobStore { BlobStore(path: path) }

    /// Whether `text` is a digest as blobs are named: 64 lowercase hex digits.
    public static func isDigest(_ text: String) -> Bool { text.utf8.count == 64 && text.utf8.allSatisfy(isDigestByte) }

    /// Whether `byte` is one a blob's name is made of: a lowercase hex digit.
    static func isDigestByte(_ byte: UInt8) -> Bool { (48...57).contains(byte) || (97...102).contains(byte) }

    /// Where the blob `digest` lives (whether or not it is there).
    public func file(of digest: String) throws -> String {
        guard Self.isDigest(digest) else { throw BlobError.invalidDigest(digest) }
        return path + "/" + digest.prefix(2) + "/" + digest.dropFirst(2)
    }

    /// The blob's size, or nil if this replica does not hold it.
    public func size(of digest: String) throws -> Int? {
        var info = stat()
        guard lstat(try file(of: digest), &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    /// Every blob held, with its size (by walking `blobs/`).
    public func all() throws -> [BlobInfo] {
        var blobs: [BlobInfo] = []
        let fileManager = FileManager.default
        guard let prefixes = try? fileManager.contentsOfDirectory(atPath: path) else { return [] }
        for prefix in prefixes.sorted() where prefix.utf8.count == 2 {
            for rest in (try? fileManager.contentsOfDirectory(atPath: path + "/" + prefix))?.sorted() ?? [] {
                let digest = prefix + rest
                guard Self.isDigest(digest), let size = try size(of: digest) else { continue }
                blobs.append(BlobInfo(digest: digest, size: size))
            }
        }
        return blobs
    }

    /// The bytes of the ledger's blobs: those its archive holds, if it has one (a node that took
    /// a hosted ledger over holds on its disk only those it has needed since), else those held
    /// here — counted by `BlobTotals`, which walks only the folders changed since it last did.
    public func totalBytes() throws -> Int {
        if let archive { return try asking { try archive.totalBytes() } }
        return try BlobTotals.shared.totalBytes(ofStoreAt: path)
    }

    /// Re-hashes a held blob; false if it is missing or its bytes no longer match its name.
    public func verify(_ digest: String) throws -> Bool {
        let file = try file(of: digest)
        guard let handle = FileHandle(forReadingAtPath: file) else { return false }
        defer { try? handle.close() }
        var hasher = SHA256()
        while let piece = try handle.read(upToCount: 1 << 20), !piece.isEmpty { hasher.update(data: piece) }
        return Hex.lowercase(hasher.finalize()) == digest
    }

    /// Starts storing a blob of at most `limit` bytes, written as it arrives, and kept only
    /// while the store stays within its `quota`.
    public func writer(limit: Int) throws -> BlobWriter {
        try BlobWriter(store: self, limit: limit, quota: quota())
    }

    /// Stores `data` (a whole file the caller holds); returns its digest and size.
    public func store(_ data: Data, limit: Int = .max) throws -> BlobInfo {
        let writer = try writer(limit: limit)
        defer { writer.abort() }
        try writer.write(data)
        return try writer.finish()
    }

    /// Removes partial uploads and imports left by a kill: files in `incoming/` untouched for
    /// `age` seconds (a younger one may be another process's upload in progress; none is ever
    /// visible as a blob).
    public func removeLeftovers(olderThan age: TimeInterval = 3_600) {
        let folder = path + "/incoming"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            var info = stat()
            guard lstat(folder + "/" + name, &info) == 0 else { continue }
            if Date().timeIntervalSince1970 - TimeInterval(info.st_mtim.tv_sec) >= age { unlink(folder + "/" + name) }
        }
    }

    /// The size of the blob `digest`, brought from the archive first when only the archive
    /// holds it (a node that took a hosted ledger over); nil when neither holds it. Blocks
    /// while the archive answers: call it on a blocking thread.
    public func fetch(_ digest: String) throws -> Int? {
        if let size = try size(of: digest) { return size }
        guard let archive, let bytes = try asking({ try archive.bytes(ofBlob: digest) }) else { return nil }
        let writer = try local.writer(limit: archive.maxBlobBytes)
        defer { writer.abort() }
        try writer.write(bytes)
        return try writer.finish(expecting: digest).size
    }

    /// Archives the held blob `digest` if the archive lacks it (one held here from before the
    /// ledger had an archive, or one the archive's retention removed while another node served
    /// the ledger): called when it is uploaded or attached again, before that is acknowledged.
    public func ensureArchived(_ digest: String) throws {
        guard let archive, try asking({ try !archive.holds(blob: digest) }) else { return }
        let file = try file(of: digest)
        try asking { try archive.archive(blob: digest, file: file) }
    }

    /// Asks the archive: a failure that is not about the blob itself (too large) means it did
    /// not take or answer it — `LogError.notArchived`, as for the log's bytes (a 503 over HTTP).
    func asking<Value>(_ call: () throws -> Value) throws -> Value {
        do { return try call() } catch let error as BlobError { throw error } catch { throw LogError.notArchived(cause: "\(error)") }
    }

    /// Runs `body`, which relies on blobs being held (an upload or a peer's copy of bytes held
    /// already, an attachment of a held blob), while retention removes none. Retention removes
    /// a blob in `whileRetentionRemoves` after looking at it again, so a blob is either removed
    /// first (then written anew, or its attachment refused) or relied on first (its time
    /// touched, and retention keeps it). A lock on `blobs/retention.lock`: across processes too,
    /// for `tally attachments gc` beside a running service.
    public func whileRetentionWaits<Value>(_ body: () throws -> Value) throws -> Value {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return try FileLock.whileHeld(path: path + "/retention.lock", shared: true, body)
    }

    /// Runs `body`, retention's last look at a blob and its removal, alone.
    public func whileRetentionRemoves<Value>(_ body: () throws -> Value) throws -> Value {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return try FileLock.whileHeld(path: path + "/retention.lock", shared: false, body)
    }

    /// Deletes a held blob (retention: `tally attachments gc`), from the archive first.
    public func remove(_ digest: String) throws {
        let file = try file(of: digest)
        if let archive { try asking { try archive.remove(blob: digest) } }
        guard unlink(file) == 0 || errno == ENOENT else { throw LogError.io(operation: "unlink", path: file, errno: errno) }
    }
}

/// One blob being written: bytes go to a temporary file in `blobs/incoming/` and into the
/// hash as they arrive, so nothing is held in memory; `finish` makes it the blob named by its
/// digest, `abort` (or any failure) leaves nothing.
public final class BlobWriter: @unchecked Sendable {
    // @unchecked: one upload's writer, used by one task at a time (the route that owns it).
    let store: BlobStore
    let limit: Int
    let quota: Int?
    let temporary: String
    private var descriptor: Int32
    private var hasher = SHA256()
    private var done = false
    /// Bytes written so far.
    public private(set) var size = 0
    /// The SHA-256 of the bytes written so far.
    public var digest: String { Hex.lowercase(hasher.finalize()) }
    /// The first bytes written (up to 64), to tell the content type by.
    public private(set) var head: [UInt8] = []

    init(store: BlobStore, limit: Int, quota: Int?) throws {
        self.store = store
        self.limit = limit
        self.quota = quota
        let incoming = store.path + "/incoming"
        try FileManager.default.createDirectory(atPath: incoming, withIntermediateDirectories: true)
        temporary = incoming + "/" + UUID.random().uuidString
        descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw LogError.io(operation: "create", path: temporary, errno: errno) }
    }

    /// Writes the next bytes; throws `tooLarge` (writing nothing more) once the limit is
    /// passed, and `overQuota` once the blob alone is larger than the whole quota.
    public func write(_ bytes: some Collection<UInt8>) throws {
        guard bytes.count <= limit - size else { throw BlobError.tooLarge(limit: limit) }
        if let quota, bytes.count > quota - size { throw BlobError.overQuota(quota: quota) }
        let array = Array(bytes)
        try array.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { throw LogError.io(operation: "write", path: temporary, errno: errno) }
                offset += written
            }
        }
        hasher.update(data: array)
        if head.count < 64 { head += array.prefix(64 - head.count) }
        size += array.count
    }

    /// Fsyncs and closes the file, keeping it staged (no descriptor held while it waits): for a
    /// bundle's blobs, kept only once its events are in.
    public func seal() throws {
        guard descriptor >= 0 else { return }
        guard fsync(descriptor) == 0 else { throw LogError.io(operation: "fsync", path: temporary, errno: errno) }
        close(descriptor)
        descriptor = -1
    }

    /// Like `finish`, for bytes offered as `digest` (a peer's or a bundle's): refused, storing
    /// nothing, unless they hash to it.
    public func finish(expecting digest: String) throws -> BlobInfo {
        let actual = Hex.lowercase(hasher.finalize())
        guard actual == digest else {
            abort()
            throw BlobError.digestMismatch(expected: digest, actual: actual)
        }
        return try finish()
    }

    /// Makes the bytes written a blob (fsynced, renamed into place, directory fsynced); the same
    /// bytes held already are kept as they are. Checks the quota against what the store holds.
    public func finish() throws -> BlobInfo {
        defer { abort() }
        return try store.whileRetentionWaits { try finishWhileRetentionWaits() }
    }

    private func finishWhileRetentionWaits() throws -> BlobInfo {
        let digest = Hex.lowercase(hasher.finalize())
        let file = try store.file(of: digest)
        if (try store.size(of: digest)) != nil {
            utimes(file, nil)  // uploaded again: its retention (`tally attachments gc`) starts over
            try store.ensureArchived(digest)
            return BlobInfo(digest: digest, size: size)
        }
        if let archive = store.archive, size > archive.maxBlobBytes { throw BlobError.tooLarge(limit: archive.maxBlobBytes) }
        guard let quota else { return try keep(digest, as: file) }
        // Checked and kept by one writer at a time: two uploads that each fit alone would both
        // see room, and both be kept past the quota (found by a hostile run: 8 of 600 KB
        // against 1 MiB).
        return try FileLock.whileHeld(path: store.path + "/quota.lock", shared: false) {
            // Added with care: with an archive, the total is PostgreSQL's answer, not counted here.
            let (after, wrapped) = try store.totalBytes().addingReportingOverflow(size)
            if wrapped || after > quota { throw BlobError.overQuota(quota: quota) }
            return try keep(digest, as: file)
        }
    }

    /// Makes the bytes written the blob `digest`, at `file`.
    private func keep(_ digest: String, as file: String) throws -> BlobInfo {
        try seal()
        if let archive = store.archive { try store.asking { try archive.archive(blob: digest, file: temporary) } }  // archived before it is visible here
        let folder = (file as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        guard rename(temporary, file) == 0 else { throw LogError.io(operation: "rename", path: file, errno: errno) }
        try SegmentDirectory.syncDirectory(folder)
        try SegmentDirectory.syncDirectory(store.path)
        return BlobInfo(digest: digest, size: size)
    }

    /// Drops what was written (after `finish`, the temporary file that was not renamed); once.
    public func abort() {
        guard !done else { return }
        done = true
        if descriptor >= 0 { close(descriptor) }
        unlink(temporary)
    }

    deinit { abort() }
}

extension BlobStore {
    /// The media type of a held blob, told from its first bytes (nil if unknown or missing).
    public func contentType(of digest: String) throws -> String? {
        guard let handle = FileHandle(forReadingAtPath: try file(of: digest)) else { return nil }
        defer { try? handle.close() }
        return AttachmentType.sniff(try handle.read(upToCount: 32) ?? Data())
    }
}
