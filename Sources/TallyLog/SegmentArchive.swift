import Foundation

/// Something that must hold every byte of a log before the log does: a cluster's archive in
/// PostgreSQL (issue 32), where a batch acknowledged by one node must survive that node's loss.
///
/// The writer hands it, before each write, exactly the bytes it is about to append to its
/// segment files — the frames as stored, each with its segment and offset (`SegmentAppend`) —
/// and writes them only if `archive` returns. When `archive` throws, nothing of that write is
/// on the local disk and the writer stops, as after a failed `fsync`: whatever the archive made
/// of it, the local log is a prefix of the archive's, and the next writer's open starts from
/// there. Replaying the appends in order (`SegmentAppend.replay`) rebuilds the segment files
/// byte for byte.
///
/// Called on the writer's flushing thread, one write at a time, in log order.
public protocol SegmentArchive: Sendable {
    func archive(_ appends: [SegmentAppend]) throws
}

/// Bytes appended to one segment file.
public struct SegmentAppend: Sendable, Equatable {
    /// The segment's file name (`SegmentFormat.fileName`): a segment not yet on disk starts
    /// with its file header (`SegmentFormat.fileHeader`), which is not among the appends.
    public let segment: String
    /// Where in the file the bytes go (at least the file header's size).
    public let offset: Int
    public let bytes: [UInt8]
    /// Set when these bytes seal the segment (it is then made read-only): the segment the log
    /// goes on in, named by the seal (its first index).
    public let nextSegment: String?
    /// Whether these bytes seal the segment.
    public var seals: Bool { nextSegment != nil }

    public init(segment: String, offset: Int, bytes: [UInt8], nextSegment: String? = nil) {
        (self.segment, self.offset, self.bytes, self.nextSegment) = (segment, offset, bytes, nextSegment)
    }
}

/// Where a log ends (what a cluster's archive and a node compare before it serves a ledger): its newest segment, that segment's length, and whether it is
/// sealed (the next append then starts a later segment).
public struct LogEnd: Sendable, Equatable, CustomStringConvertible {
    public let segment: String
    public let length: Int
    public let sealed: Bool

    public init(segment: String, length: Int, sealed: Bool) { (self.segment, self.length, self.sealed) = (segment, length, sealed) }

    /// Where the log in `directory` ends (nil: not one byte past a segment header): the newest
    /// segment holding more than its header — a writer that found its last segment sealed
    /// starts an empty one at open — with its length, sealed when read-only (the writer and
    /// `SegmentAppend.replay` leave a sealed segment so).
    public static func of(logDirectory directory: String) throws -> LogEnd? {
        for name in try SegmentDirectory.segmentNames(in: directory).reversed() {
            let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/" + name)
            let length = (attributes[.size] as? Int) ?? 0
            guard length > SegmentFormat.fileHeaderSize else { continue }
            let permissions = (attributes[.posixPermissions] as? Int) ?? 0o644
            return LogEnd(segment: name, length: length, sealed: permissions & 0o200 == 0)
        }
        return nil
    }

    public var description: String { "\(segment) at \(length)\(sealed ? ", sealed" : "")" }
}

extension SegmentAppend {
    /// Writes `appends`, in order, into the segment files of `directory` (a log folder no
    /// writer holds, recovered: its torn tail cut): each append must start where the log ends —
    /// the first segment's header end in an empty log, right after the last bytes of a segment
    /// not sealed, or the header end of the segment a seal named — and a segment is created
    /// with its file header at its first append; a sealing append leaves the file read-only.
    /// Synced at each seal and at the end. What an archive holds, replayed, is the log byte for byte.
    public static func replay(_ appends: [SegmentAppend], into directory: String) throws {
        // Where the next append must go: after the log as it is, then after each append.
        var end = try LogEnd.of(logDirectory: directory)
        var next: String?  // the segment the last sealing append of this replay named
        var open: (name: String, descriptor: Int32)?
        defer { if let open { close(open.descriptor) } }
        for append in appends {
            // Only a segment's own name (an archive's bytes are checked like a peer's).
            guard let firstIndex = SegmentFormat.firstIndex(fromFileName: append.segment)
            else { throw LogError.notALog(path: directory, reason: "'\(append.segment)' is not a segment's name") }
            let follows: Bool
            switch end {
            case nil: follows = firstIndex == 1 && append.offset == SegmentFormat.fileHeaderSize
            case let end? where end.sealed:
                follows = append.segment == (next ?? append.segment) && append.segment > end.segment && append.offset == SegmentFormat.fileHeaderSize
            case let end?: follows = append.segment == end.segment && append.offset == end.length
            }
            guard follows, !append.bytes.isEmpty else {
                throw LogError.brokenInvariant(
                    reason:
                        "an append of \(append.bytes.count) bytes to \(append.segment) at \(append.offset) does not follow the log, which ends \(end.map { "in \($0)" } ?? "before its first byte")"
                )
            }
            let path = directory + "/" + append.segment
            if open?.name != append.segment {
                if let previous = open {
                    guard fsync(previous.descriptor) == 0 else { throw LogError.io(operation: "fsync", path: directory + "/" + previous.name, errno: errno) }
                    close(previous.descriptor)
                    open = nil
                }
                if !FileManager.default.fileExists(atPath: path) {
                    let created = try SegmentDirectory.createSegment(in: directory, firstIndex: firstIndex)
                    close(created)
                }
                let descriptor = Glibc.open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW)
                guard descriptor >= 0 else { throw LogError.io(operation: "open", path: path, errno: errno) }
                open = (append.segment, descriptor)
            }
            guard let descriptor = open?.descriptor else { continue }
            let length = lseek(descriptor, 0, SEEK_END)
            guard length == append.offset else {
                throw LogError.brokenInvariant(reason: "an append to \(append.segment) at offset \(append.offset), but the file ends at \(length)")
            }
            try append.bytes.withUnsafeBytes { try SegmentDirectory.writeAll(descriptor, $0, path: path) }
            if append.seals {
                guard fsync(descriptor) == 0 else { throw LogError.io(operation: "fsync", path: path, errno: errno) }
                fchmod(descriptor, 0o444)
            }
            end = LogEnd(segment: append.segment, length: append.offset + append.bytes.count, sealed: append.seals)
            next = append.nextSegment
        }
        if let open, fsync(open.descriptor) != 0 { throw LogError.io(operation: "fsync", path: directory + "/" + open.name, errno: errno) }
    }
}
