import Foundation
import GRDB
import Synchronization
import TallyLog
import TallyMigrations

/// Periodic copies of the views, so that reading the ledger as of a past log index
/// (`AsOfViews`) starts from the latest copy at or before it instead of from nothing.
///
/// `DATA_DIR/snapshots/views-<index>.sqlite` is the views database exactly as it stood at log
/// index `<index>`, and `views-<index>.json` beside it says so, with the file's size, its
/// CRC-32C and the schema it was written with. Snapshots are never required for correctness:
/// one that is missing, damaged (size or checksum wrong) or of another schema only costs
/// time — a damaged one is removed with a warning and the next older one is used.
public struct ViewSnapshots: Sendable {
    /// One snapshot, as its sidecar describes it.
    public struct Snapshot: Sendable, Codable, Equatable {
        /// The log index the copied views reflect.
        public var index: UInt64
        /// The database file's size in bytes.
        public var bytes: Int64
        /// CRC-32C of the database file's bytes.
        public var crc32c: UInt32
        /// The last migration applied to the copied views.
        public var schema: String
        /// When it was taken (ISO 8601, UTC).
        public var takenAt: String
    }

    /// The folder, `DATA_DIR/snapshots`.
    public let folder: String

    public init(_ directory: DataDirectory) { folder = directory.path + "/snapshots" }

    /// Snapshots kept in `folder` (tests).
    init(folder: String) { self.folder = folder }

    /// The schema this binary writes: a snapshot of any other is passed over.
    static var currentSchema: String { TallyMigrations.all.last!.identifier }

    func databasePath(_ index: UInt64) -> String { folder + "/" + String(format: "views-%012llu.sqlite", index) }
    func sidecarPath(_ index: UInt64) -> String { folder + "/" + String(format: "views-%012llu.json", index) }

    /// Every snapshot with a readable sidecar (a regular file of at most 4 KiB, named for the
    /// index it states) beside its database file, oldest first.
    public func list() -> [Snapshot] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasPrefix("views-") && $0.hasSuffix(".json") }.compactMap { name in
            var info = stat()
            guard lstat(folder + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= 4_096,
                let data = FileManager.default.contents(atPath: folder + "/" + name),
                let snapshot = try? JSONDecoder().decode(Snapshot.self, from: data),
                name == (sidecarPath(snapshot.index) as NSString).lastPathComponent,
                FileManager.default.fileExists(atPath: databasePath(snapshot.index))
            else { return nil }
            return snapshot
        }.sorted { $0.index < $1.index }
    }

    /// Whether the views at `checkpoint` are at least `every` events past the latest snapshot
    /// of this schema at or before it.
    public func isDue(checkpoint: UInt64, every: UInt64) -> Bool {
        let latest = list().last { $0.index <= checkpoint && $0.schema == Self.currentSchema }?.index ?? 0
        return checkpoint - latest >= max(every, 1)
    }

    /// Removes every snapshot past `index`: after the log was cut there (`tally log repair`),
    /// the indexes past it name other events, so those copies show what is no longer the log.
    public func removeAll(after index: UInt64) {
        for snapshot in list() where snapshot.index > index { remove(snapshot) }
    }

    /// Copies `views` as they stand (one read transaction: rows and checkpoint together) into
    /// a new snapshot; nil if there is already one at that index or the views are empty.
    /// Written beside its final name, fsynced, then renamed: the database first, the sidecar
    /// last, so a sidecar always describes a complete file.
    @discardableResult
    public func take(from views: DatabasePool) throws -> Snapshot? {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let partial = folder + "/views.partial"
        ProjectionDatabase.removeFiles(at: partial)
        defer { ProjectionDatabase.removeFiles(at: partial) }
        let copy = try DatabaseQueue(path: partial)
        try views.backup(to: copy)
        let index = try copy.read { try Projector.checkpoint($0) }
        try copy.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = WAL") }  // as AsOfViews opens it
        try copy.close()
        guard index > 0, !FileManager.default.fileExists(atPath: databasePath(index)) else { return nil }
        let (bytes, crc) = try Self.checksum(of: partial, syncing: true)
        let snapshot = Snapshot(
            index: index, bytes: bytes, crc32c: crc, schema: Self.currentSchema,
            takenAt: ISO8601DateFormatter().string(from: Date()))
        try rename(partial, to: databasePath(index))
        let sidecar = try JSONEncoder().encode(snapshot)
        let partialSidecar = folder + "/views.json.partial"
        guard FileManager.default.createFile(atPath: partialSidecar, contents: sidecar) else {
            throw LogError.io(operation: "create", path: partialSidecar, errno: errno)
        }
        _ = try Self.checksum(of: partialSidecar, syncing: true)
        try rename(partialSidecar, to: sidecarPath(index))
        return snapshot
    }

    private func rename(_ from: String, to: String) throws {
        guard Glibc.rename(from, to) == 0 else { throw LogError.io(operation: "rename", path: from, errno: errno) }
        let fd = open(folder, O_RDONLY | O_DIRECTORY)
        if fd >= 0 { fsync(fd); close(fd) }
    }

    /// The latest usable snapshot at or before `index`: of this schema, with its file's size
    /// and checksum as recorded. A damaged one is removed, `warn`ed about, and passed over.
    public func latestGood(atOrBefore index: UInt64, warn: (String) -> Void) -> Snapshot? {
        for snapshot in list().reversed() where snapshot.index <= index && snapshot.schema == Self.currentSchema {
            if let problem = problem(with: snapshot) {
                warn("snapshot \((databasePath(snapshot.index) as NSString).lastPathComponent) is damaged (\(problem)); ignored and removed")
                remove(snapshot)
                continue
            }
            return snapshot
        }
        return nil
    }

    /// What is wrong with a snapshot's file, or nil. A file checked once is not read again
    /// while its inode, size and modification time stay the same.
    public func problem(with snapshot: Snapshot) -> String? {
        let path = databasePath(snapshot.index)
        var info = stat()
        guard stat(path, &info) == 0 else { return "its file is missing" }
        let identity = FileIdentity(info)
        if Self.verified.withLock({ $0[path] }) == identity { return nil }
        guard Int64(info.st_size) == snapshot.bytes else { return "\(info.st_size) bytes, \(snapshot.bytes) recorded" }
        guard let (_, crc) = try? Self.checksum(of: path, syncing: false) else { return "cannot be read" }
        guard crc == snapshot.crc32c else { return String(format: "CRC-32C %08x, %08x recorded", crc, snapshot.crc32c) }
        Self.verified.withLock { $0[path] = identity }
        return nil
    }

    /// Removes a snapshot's files.
    public func remove(_ snapshot: Snapshot) {
        try? FileManager.default.removeItem(atPath: sidecarPath(snapshot.index))
        ProjectionDatabase.removeFiles(at: databasePath(snapshot.index))
    }

    /// Keeps at most `count` snapshots (of this schema; others are removed): while there are
    /// more, the one whose removal leaves the smallest gap between its neighbours goes (never
    /// the newest), so the kept ones thin out evenly over the log as it grows. Also removes
    /// database files without a sidecar (a take cut short).
    public func thin(keeping count: Int) {
        var kept = list()
        for stale in kept where stale.schema != Self.currentSchema { remove(stale) }
        kept.removeAll { $0.schema != Self.currentSchema }
        while kept.count > max(count, 1) {
            var victim = 0
            if kept.count > 2 {
                victim = (1..<(kept.count - 1)).min { kept[$0 + 1].index - kept[$0 - 1].index < kept[$1 + 1].index - kept[$1 - 1].index }!
            }
            remove(kept.remove(at: victim))
        }
        let described = Set(kept.map { (databasePath($0.index) as NSString).lastPathComponent })
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        where name.hasPrefix("views-") && name.hasSuffix(".sqlite") && !described.contains(name) {
            ProjectionDatabase.removeFiles(at: folder + "/" + name)
        }
    }

    /// Files already checked this process, by path.
    private static let verified = Mutex<[String: FileIdentity]>([:])

    private struct FileIdentity: Equatable {
        var inode: UInt64, size: Int64, modifiedSeconds: Int, modifiedNanoseconds: Int
        init(_ info: stat) {
            (inode, size) = (UInt64(info.st_ino), Int64(info.st_size))
            (modifiedSeconds, modifiedNanoseconds) = (info.st_mtim.tv_sec, info.st_mtim.tv_nsec)
        }
    }

    /// The size and CRC-32C of a file, read in 1 MiB pieces; with `syncing`, fsynced first.
    static func checksum(of path: String, syncing: Bool) throws -> (bytes: Int64, crc: UInt32) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw LogError.io(operation: "open", path: path, errno: errno) }
        defer { close(fd) }
        if syncing, fsync(fd) != 0 { throw LogError.io(operation: "fsync", path: path, errno: errno) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var (total, crc): (Int64, UInt32) = (0, 0)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count >= 0 else { throw LogError.io(operation: "read", path: path, errno: errno) }
            if count == 0 { return (total, crc) }
            crc = buffer.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[..<count]), continuing: crc) }
            total += Int64(count)
        }
    }
}
