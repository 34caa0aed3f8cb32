import Foundation
import TallyCore

/// What a data directory says about the replica it holds. Written once by `tally init`.
public struct ReplicaIdentity: Codable, Sendable, Equatable {
    /// Origin id of this replica's replicated events.
    public var replicaId: String
    /// Origin id of this replica's local-only events (a chain that never leaves it).
    public var localChainId: String
    /// A person's name for the replica ("home-server", "laptop").
    public var name: String
    /// When it was created (ISO 8601).
    public var createdAt: String
    /// Layout version of the data directory.
    public var formatVersion: Int

    /// The replica id.
    public var origin: ReplicaID { ReplicaID(string: replicaId)! }
    /// The local-only chain id.
    public var localOnlyOrigin: ReplicaID { ReplicaID(string: localChainId)! }
}

/// One replica's data directory: identity, log segments, projections, config.
///
/// ```
/// DIR/replica.json      identity (never changes)
/// DIR/replica.key       the replica's Ed25519 signing key (0600, never exported)
/// DIR/log/              segment files, writer.lock, origin-keys.json (pinned keys of origins)
/// DIR/projections.sqlite  views (later)
/// ```
public struct DataDirectory: Sendable {
    /// The directory's path.
    public let path: String
    /// Its identity.
    public let identity: ReplicaIdentity

    /// The log directory.
    public var logPath: String { path + "/log" }

    /// Opens an initialised data directory.
    public init(path: String) throws {
        self.path = path
        let file = path + "/replica.json"
        guard let data = FileManager.default.contents(atPath: file) else {
            throw LogError.notALog(path: path, reason: "no replica.json (run 'tally init --data-dir \(path)' to create a replica here)")
        }
        guard let identity = try? JSONDecoder().decode(ReplicaIdentity.self, from: data),
            ReplicaID(string: identity.replicaId) != nil, ReplicaID(string: identity.localChainId) != nil
        else { throw LogError.notALog(path: path, reason: "replica.json is unreadable") }
        self.identity = identity
        // Data directories made before 0700 at creation are narrowed when next opened (the
        // owner's choice to share one is not ours to keep: peer tokens are in it).
        var info = stat()
        if stat(path, &info) == 0, info.st_uid == geteuid(), info.st_mode & 0o077 != 0 { _ = chmod(path, 0o700) }
    }

    /// Creates a new replica in `path` (which may exist but must not hold one already).
    public static func create(path: String, name: String) throws -> DataDirectory {
        let fileManager = FileManager.default
        if fileManager.fileExists(atPath: path + "/replica.json") {
            throw LogError.rejected(reason: "\(path) already holds a replica; its id never changes, so init refuses to overwrite it")
        }
        try fileManager.createDirectory(atPath: path + "/log", withIntermediateDirectories: true)
        // Only its owner may look inside: it holds token hashes, peer tokens and the ledger itself.
        guard chmod(path, 0o700) == 0 else { throw LogError.io(operation: "chmod 0700", path: path, errno: errno) }
        let identity = ReplicaIdentity(
            replicaId: ReplicaID.random().description, localChainId: ReplicaID.random().description, name: name,
            createdAt: ISO8601DateFormatter().string(from: Date()), formatVersion: 1)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try writeDurably(try encoder.encode(identity), to: path + "/replica.json")
        try ReplicaSigningKey.generate().write(to: path + "/replica.key")
        try SegmentDirectory.syncDirectory(path + "/log")
        try SegmentDirectory.syncDirectory(path)
        return try DataDirectory(path: path)
    }

    /// This replica's private signing key (0600; never exported).
    public var signingKeyPath: String { path + "/replica.key" }

    /// Pinned public keys of the origins this replica has received events from.
    public var originKeys: OriginKeyStore { OriginKeyStore(logDirectory: logPath) }

    /// Opens the log writer of this replica, signing with its key (created on first open).
    public func openWriter(configuration: LogConfiguration = LogConfiguration()) throws -> LogWriter {
        try LogWriter(
            directory: logPath, localOrigin: identity.origin, localOnlyOrigin: identity.localOnlyOrigin, configuration: configuration,
            signingKeyPath: signingKeyPath)
    }

    /// Replaces this replica's signing key with a new one (`tally keys rotate`): the rotation is
    /// recorded in the log, signed by the old key, and the old key is gone from disk.
    public func rotateSigningKey(using writer: LogWriter) throws -> KeyRotation {
        let next = ReplicaSigningKey.generate()
        try next.write(to: signingKeyPath + ".next")
        return try writer.rotateKey(to: next) {
            guard rename(signingKeyPath + ".next", signingKeyPath) == 0 else {
                throw LogError.io(operation: "rename", path: signingKeyPath + ".next", errno: errno)
            }
            try SegmentDirectory.syncDirectory(path)
        }
    }

    /// A reader of this replica's log.
    public var reader: LogReader { LogReader(directory: logPath) }
}

/// Writes a file beside its final name, fsyncs it, renames it into place and fsyncs the directory.
public func writeDurably(_ data: Data, to path: String, mode: mode_t = 0o644) throws {
    let temporary = path + ".tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
    guard fd >= 0 else { throw LogError.io(operation: "create", path: temporary, errno: errno) }
    defer { close(fd) }
    // Exactly `mode` before the first byte: `open` keeps the mode of a stale temporary file
    // left by a crash, and the umask could only narrow it.
    guard fchmod(fd, mode) == 0 else { throw LogError.io(operation: "fchmod", path: temporary, errno: errno) }
    try data.withUnsafeBytes { try SegmentDirectory.writeAll(fd, $0, path: temporary) }
    guard fsync(fd) == 0 else { throw LogError.io(operation: "fsync", path: temporary, errno: errno) }
    guard rename(temporary, path) == 0 else { throw LogError.io(operation: "rename", path: temporary, errno: errno) }
    try SegmentDirectory.syncDirectory((path as NSString).deletingLastPathComponent)
}

/// Makes the entries of `folder` durable (a rename into it, a file created in it): fsyncs the folder.
public func syncFolder(_ folder: String) throws {
    try SegmentDirectory.syncDirectory(folder)
}
