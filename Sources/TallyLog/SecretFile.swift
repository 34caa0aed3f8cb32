import Foundation
import Synchronization

/// A small JSON file of secrets in the data directory — `tokens.json` (token hashes),
/// `peers.json` (peer tokens in plain text), `server.json` — readable by its owner only from
/// its first byte (`writeDurably` with mode 0600), and changed only under an exclusive lock on
/// `NAME.lock`, so two processes changing it at once (two `tally token create`) cannot lose
/// each other's change.
///
/// Reads are answered from memory while the file is unchanged (`FileVersion`: one `stat`),
/// so a request or an open stream that checks a session or a token parses nothing.
public struct SecretFile<Contents: Codable & Sendable>: Sendable {
    /// The file.
    public let path: String
    /// What a missing file holds.
    let empty: Contents
    /// Whether a file that does not decode holds `empty` too (a cache, such as an app's kept
    /// sessions: losing it costs a sign-in) rather than being an error (a file of record).
    let damagedMeansEmpty: Bool
    /// The contents last read, and the version of the file they were read from.
    private let lastRead = LastRead()

    private final class LastRead: Sendable {
        let value = Mutex<(version: FileVersion, contents: Contents)?>(nil)
    }

    public init(path: String, empty: Contents, damagedMeansEmpty: Bool = false) {
        self.path = path
        self.empty = empty
        self.damagedMeansEmpty = damagedMeansEmpty
    }

    /// The contents (`empty` if there is no file yet).
    public func read() throws -> Contents {
        let version = FileVersion(path: path)
        if let known = lastRead.value.withLock({ $0 }), known.version == version { return known.contents }
        let contents = try readFromDisk()
        lastRead.value.withLock { $0 = (version, contents) }
        return contents
    }

    private func readFromDisk() throws -> Contents {
        guard let data = FileManager.default.contents(atPath: path) else { return empty }
        do { return try JSONDecoder().decode(Contents.self, from: data) } catch  where damagedMeansEmpty { return empty }
    }

    /// Reads, changes and writes the file back (0600, durably) under its lock; returns what
    /// `change` returns. Nothing is written if `change` throws.
    public func update<Result>(_ change: (inout Contents) throws -> Result) throws -> Result {
        let lock = try FileLock(path: path + ".lock", timeout: 10)
        defer { lock.release() }
        var contents = try readFromDisk()
        let result = try change(&contents)
        try write(contents)
        return result
    }

    /// Replaces the contents (under the lock).
    public func replace(with contents: Contents) throws {
        try update { $0 = contents }
    }

    private func write(_ contents: Contents) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try writeDurably(try encoder.encode(contents), to: path, mode: 0o600)
    }
}

/// What tells one version of a file from another without reading it: `writeDurably` renames a
/// new file into place (a new inode), and an edit in place changes the size or the change time
/// (ctime, which no one can set back), so any change of content changes this. A missing file
/// is a version of its own (all zero).
public struct FileVersion: Equatable, Sendable {
    var inode: UInt64 = 0, size: Int64 = 0, modified = 0 as Int, modifiedNanos = 0 as Int, changed = 0 as Int, changedNanos = 0 as Int

    public init(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        (modified, modifiedNanos) = (info.st_mtim.tv_sec, info.st_mtim.tv_nsec)
        (changed, changedNanos) = (info.st_ctim.tv_sec, info.st_ctim.tv_nsec)
    }
}
