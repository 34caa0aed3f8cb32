import Foundation
import TallyCore

/// What a writer's clean close leaves beside the segments, so that the next writer need not
/// decode the log to learn what this one knew (LOG_FORMAT.md §4.1): each segment's name,
/// length and CRC-32C, the head, and the LZ4 window to continue the newest segment with.
///
/// Recovery decodes every frame of every segment and hashes every event of the newest one (to
/// rebuild the head past the last seal): ~7 ms for a busy household's year of writes, paid at
/// each reopen of a hosted ledger. With this record an open reads the segments once and
/// checksums them (every byte is still checked), and decodes nothing.
///
/// Trusted only by the next writer, and only while every segment is byte for byte what this
/// writer left: the same names, lengths and checksums. The next writer removes the record as
/// it reads it, before any append; should that removal not survive a power cut, the record no
/// longer matches a segment written or cut since. A record that does not decode or match is
/// ignored, and the log is recovered as ever.
struct CleanClose: Equatable {
    static let fileName = "clean-close"
    private static let magic: [UInt8] = Array("TLCC".utf8)
    private static let formatVersion: UInt64 = 1

    /// One segment as the writer left it.
    struct Segment: Equatable {
        var name: String
        var length: Int
        var checksum: UInt32
    }

    /// Every segment, oldest first.
    var segments: [Segment]
    /// The log's head.
    var head: LogHead
    /// The newest segment's LZ4 window.
    var window: [UInt8]

    /// The record of the segments in `directory` (read whole and checksummed) with the writer's
    /// `head` and `window`.
    static func of(_ directory: String, head: LogHead, window: [UInt8]) throws -> CleanClose {
        let segments = try SegmentDirectory.segmentNames(in: directory).map { name in try segment(directory, name) }
        return CleanClose(segments: segments, head: head, window: window)
    }

    /// Writes the record into `directory` (beside, then renamed over any old one). Not synced:
    /// a record lost in a crash costs the next open a full recovery, nothing more.
    func write(in directory: String) throws {
        let path = directory + "/" + Self.fileName
        let fd = open(path + ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw LogError.io(operation: "create", path: path + ".tmp", errno: errno) }
        defer { close(fd) }
        try encoded().withUnsafeBytes { try SegmentDirectory.writeAll(fd, $0, path: path + ".tmp") }
        guard rename(path + ".tmp", path) == 0 else { throw LogError.io(operation: "rename", path: path + ".tmp", errno: errno) }
    }

    /// The record a clean close left in `directory`, if its segments (`names`) are still byte
    /// for byte as it says; removed either way (it serves one open at most).
    static func take(from directory: String, segments names: [String]) -> CleanClose? {
        let path = directory + "/" + fileName
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        unlink(path)
        guard let record = try? decode(Array(data)), record.segments.map(\.name) == names, !names.isEmpty else { return nil }
        for expected in record.segments {
            guard (try? segment(directory, expected.name)) == expected else { return nil }
        }
        return record
    }

    /// Whether `directory` holds a record whose segments (`names`) still have the lengths it
    /// says — a log a writer closed cleanly and nothing grew or cut since: it has no torn tail.
    /// Only looks (the writer's open takes the record, checking each segment's checksum too).
    static func isLeft(in directory: String, segments names: [String]) -> Bool {
        guard let data = FileManager.default.contents(atPath: directory + "/" + fileName),
            let record = try? decode(Array(data)), record.segments.map(\.name) == names, !names.isEmpty
        else { return false }
        return record.segments.allSatisfy { expected in
            let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + expected.name)
            return (attributes?[.size] as? Int) == expected.length
        }
    }

    /// Removes any record from `directory` (a repair changes the segments behind the writer's back).
    static func remove(from directory: String) { unlink(directory + "/" + fileName) }

    /// What recovery would have found.
    var recovered: RecoveredLog {
        var recovered = RecoveredLog(
            head: head, segments: segments.map(\.name), lastSegmentLength: segments.last?.length ?? 0, lastSegmentSealed: false,
            window: SegmentWindow(bytes: window), tornTail: nil)
        recovered.fromCleanClose = true
        return recovered
    }

    /// The segment `name` of `directory` as it is now: its length and checksum.
    private static func segment(_ directory: String, _ name: String) throws -> Segment {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name), options: .alwaysMapped)
        return Segment(name: name, length: bytes.count, checksum: bytes.withUnsafeBytes { CRC32C.checksum($0) })
    }

    func encoded() -> [UInt8] {
        var out = ByteWriter(capacity: 512 + window.count)
        out.raw(Self.magic)
        out.varint(Self.formatVersion)
        out.varint(UInt64(segments.count))
        for segment in segments {
            out.lengthPrefixed(segment.name)
            out.varint(UInt64(segment.length))
            out.u32(segment.checksum)
        }
        let head = head.encoded()
        out.varint(UInt64(head.count))
        out.raw(head)
        out.varint(UInt64(window.count))
        out.raw(window)
        out.u32(CRC32C.checksum(out.bytes))
        return out.bytes
    }

    static func decode(_ bytes: [UInt8]) throws(DecodingError) -> CleanClose {
        guard bytes.count > 4 else { throw DecodingError("clean-close record too short") }
        let body = Array(bytes.dropLast(4))
        let stored = bytes.suffix(4).withUnsafeBytes { $0.loadUnaligned(as: UInt32.self).littleEndian }
        guard CRC32C.checksum(body) == stored else { throw DecodingError("clean-close record checksum mismatch") }
        let result = body.withUnsafeBytes { buffer in
            Result { () throws(DecodingError) -> CleanClose in
                var input = ByteReader(buffer)
                guard Array(try input.take(4)) == magic, try input.varint() == formatVersion else {
                    throw DecodingError("not a clean-close record of this format")
                }
                var segments: [Segment] = []
                for _ in 0..<(try input.length(max: 1 << 20)) {
                    let name = try input.string(maxBytes: 255)
                    guard let length = Int(exactly: try input.varint()), length <= Int(Int32.max) else { throw DecodingError("segment length out of range") }
                    segments.append(Segment(name: name, length: length, checksum: try input.u32()))
                }
                let head = try LogHead.decode(try input.take(try input.length(max: 1 << 26)))
                let window = Array(try input.take(try input.length(max: SegmentFormat.windowSize)))
                guard input.atEnd else { throw DecodingError("unexpected bytes after the clean-close record") }
                return CleanClose(segments: segments, head: head, window: window)
            }
        }
        return try result.get()
    }
}
