import Foundation
import Synchronization

/// A log folder held while a cluster node brings it to where the archive of its ledger ends
/// (issue 32), before a writer opens it: the writer lock is taken, a torn tail cut as a
/// writer's open would cut it, and the archive's appends written after the log's end
/// (`SegmentAppend.replay`). `release` lets the lock go; the writer opens after.
///
/// What the caller decides (it knows the archive): whether the log's last bytes are an
/// append the archive holds as they are (`bytes`), and where to cut a log that ends inside
/// one (a crash tore a write of several frames after its first: the archive replays it whole).
public final class LogReplay: Sendable {
    public let directory: String
    private let lock: FileLock
    private let current = Mutex<LogEnd?>(nil)
    /// Where the log ends now (nil: not one byte past a segment header).
    public var end: LogEnd? { current.withLock { $0 } }

    /// Holds the log in `directory`, waiting up to `lockTimeout` seconds for a writer to let
    /// go. A log a writer closed cleanly, unchanged since, is taken as it is; any other is
    /// recovered first (its torn tail cut and synced).
    public init(logDirectory directory: String, lockTimeout: Double) throws {
        self.directory = directory
        lock = try FileLock(path: directory + "/writer.lock", timeout: lockTimeout)
        do {
            try SegmentDirectory.removeLeftovers(in: directory)
            let names = try SegmentDirectory.segmentNames(in: directory)
            if !CleanClose.isLeft(in: directory, segments: names) {
                _ = try LogRecovery.recover(directory: directory, cutTornTail: true)
            }
            let end = try LogEnd.of(logDirectory: directory)
            current.withLock { $0 = end }
        } catch {
            lock.release()
            throw error
        }
    }

    /// The bytes of `segment` from `offset` up to `upTo` (the log's own, to compare with what
    /// the archive holds there).
    public func bytes(of segment: String, from offset: Int, upTo: Int) throws -> [UInt8] {
        guard SegmentFormat.firstIndex(fromFileName: segment) != nil, offset >= 0, upTo >= offset else {
            throw LogError.brokenInvariant(reason: "no bytes \(offset)..<\(upTo) of '\(segment)' to read")
        }
        let path = directory + "/" + segment
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        let data = try handle.read(upToCount: upTo - offset) ?? Data()
        guard data.count == upTo - offset else {
            throw LogError.brokenInvariant(reason: "\(segment) ends before \(upTo)")
        }
        return Array(data)
    }

    /// Cuts the log's newest segment back to `length` (the start of an append the archive
    /// holds whole, of which the log has only a prefix) and syncs it. A sealed segment is
    /// never cut (its seal was written with the append that sealed it).
    public func cut(to length: Int) throws {
        guard let end, !end.sealed, length >= SegmentFormat.fileHeaderSize, length < end.length else {
            throw LogError.brokenInvariant(reason: "the log, which ends \(end.map { "in \($0)" } ?? "before its first byte"), cannot be cut to \(length)")
        }
        let path = directory + "/" + end.segment
        let descriptor = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { throw LogError.io(operation: "open", path: path, errno: errno) }
        defer { close(descriptor) }
        guard ftruncate(descriptor, off_t(length)) == 0 else { throw LogError.io(operation: "truncate", path: path, errno: errno) }
        guard fsync(descriptor) == 0 else { throw LogError.io(operation: "fsync", path: path, errno: errno) }
        CleanClose.remove(from: directory)
        let cut = try LogEnd.of(logDirectory: directory)
        current.withLock { $0 = cut }
    }

    /// Seals the log's newest segment as the archive's last append there did (a crash came
    /// between writing the sealing bytes and making the file read-only): synced, then read-only.
    public func seal() throws {
        guard let end, !end.sealed else { return }
        let path = directory + "/" + end.segment
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { throw LogError.io(operation: "open", path: path, errno: errno) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw LogError.io(operation: "fsync", path: path, errno: errno) }
        guard fchmod(descriptor, 0o444) == 0 else { throw LogError.io(operation: "chmod", path: path, errno: errno) }
        CleanClose.remove(from: directory)
        current.withLock { $0 = LogEnd(segment: end.segment, length: end.length, sealed: true) }
    }

    /// Writes `appends` after the log's end (`SegmentAppend.replay`: each must follow).
    public func replay(_ appends: [SegmentAppend]) throws {
        guard !appends.isEmpty else { return }
        CleanClose.remove(from: directory)  // the segments change: the writer's open reads them
        try SegmentAppend.replay(appends, into: directory)
        let replayed = try LogEnd.of(logDirectory: directory)
        current.withLock { $0 = replayed }
    }

    /// Lets the writer lock go (the writer opens next).
    public func release() { lock.release() }

    deinit { lock.release() }
}
