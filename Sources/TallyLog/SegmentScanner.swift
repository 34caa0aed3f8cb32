import Foundation
import TallyCore

/// One frame as the scanner hands it out (events and signatures frames; a seal is returned in
/// `SegmentScan`): where it starts and its uncompressed payload.
struct ScannedFrame {
    var offset: Int
    var header: FrameHeader
    /// Uncompressed payload, valid only during the visit.
    var payload: UnsafeRawBufferPointer
}

/// What scanning one segment file found.
struct SegmentScan {
    /// Bytes from the start of the file through the last complete, valid frame.
    var validLength: Int
    /// The file's size as read.
    var fileLength: Int
    /// Why the bytes after `validLength` were judged a torn (unfinished) write, if there are any.
    var tornTail: String?
    /// The summary in the seal frame, if the segment is sealed.
    var seal: LogHead?
    /// Index of the next event after this segment's last one.
    var nextIndex: UInt64
    /// The LZ4 dictionary window after the last frame.
    var window: SegmentWindow
}

/// Reads a segment file frame by frame, checking every checksum and the index continuity, and
/// decides whether trouble at the end is a torn tail or corruption (docs/LOG_FORMAT.md §4).
enum SegmentScanner {
    /// Scans `path`. `isLast` allows a torn tail (only the newest segment can have one).
    static func scan(path: String, isLast: Bool, visit: (ScannedFrame) throws -> Void) throws -> SegmentScan {
        let name = (path as NSString).lastPathComponent
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) } catch {
            throw LogError.io(operation: "read", path: path, errno: (error as NSError).code == 260 ? ENOENT : EIO)
        }
        return try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws -> SegmentScan in
            try scan(bytes, name: name, isLast: isLast, visit: visit)
        }
    }

    static func scan(_ bytes: UnsafeRawBufferPointer, name: String, isLast: Bool, visit: (ScannedFrame) throws -> Void) throws -> SegmentScan {
        func corrupt(_ offset: Int, _ reason: String) -> LogError { .corrupt(segment: name, offset: offset, reason: reason) }
        let fileLength = bytes.count
        guard fileLength >= SegmentFormat.fileHeaderSize else {
            if isLast { throw corrupt(0, "file shorter than its header (\(fileLength) bytes); a crash while creating it? 'tally log repair' removes it") }
            throw corrupt(0, "file shorter than its header")
        }
        let header = Array(bytes[0..<SegmentFormat.fileHeaderSize])
        guard Array(header[0..<8]) == SegmentFormat.fileMagic else { throw corrupt(0, "not a Tally segment (bad magic)") }
        guard CRC32C.checksum(Array(header[0..<28])) == header[28..<32].withUnsafeBytes({ $0.loadUnaligned(as: UInt32.self).littleEndian }) else {
            throw corrupt(0, "segment header checksum mismatch")
        }
        let version = UInt16(header[8]) | UInt16(header[9]) << 8
        guard version == SegmentFormat.version else { throw corrupt(8, "segment format version \(version); this build reads \(SegmentFormat.version)") }
        let firstIndex = header[12..<20].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self).littleEndian }
        guard SegmentFormat.firstIndex(fromFileName: name) == firstIndex else {
            throw corrupt(12, "header says first index \(firstIndex) but the file name says otherwise")
        }

        var offset = SegmentFormat.fileHeaderSize
        var nextIndex = firstIndex
        var window = SegmentWindow()
        var seal: LogHead?
        var tornTail: String?
        while offset < fileLength {
            let remaining = fileLength - offset
            if seal != nil { throw corrupt(offset, "\(remaining) bytes after the seal frame") }
            guard remaining >= SegmentFormat.frameHeaderSize else {
                if isLast { tornTail = "incomplete frame header (\(remaining) bytes)"; break }
                throw corrupt(offset, "incomplete frame header in a sealed segment")
            }
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            guard let frame = FrameHeader.decode(rest) else {
                if isLast, rest.allSatisfy({ $0 == 0 }) { tornTail = "zero-filled tail (\(remaining) bytes)"; break }
                throw corrupt(offset, "frame header invalid (bad magic, field or checksum)")
            }
            let end = offset + SegmentFormat.frameHeaderSize + Int(frame.storedLength)
            guard end <= fileLength else {
                if isLast { tornTail = "frame cut short (\(remaining) of \(end - offset) bytes present)"; break }
                throw corrupt(offset, "frame extends past the end of a sealed segment")
            }
            let stored = UnsafeRawBufferPointer(rebasing: bytes[(offset + SegmentFormat.frameHeaderSize)..<end])
            guard CRC32C.checksum(stored) == frame.payloadChecksum else {
                if isLast, end == fileLength { tornTail = "last frame's checksum fails (its write did not complete)"; break }
                throw corrupt(offset, "frame checksum mismatch")
            }
            guard frame.firstIndex == nextIndex else {
                throw corrupt(offset, "frame starts at log index \(frame.firstIndex), expected \(nextIndex) (frames missing or reordered)")
            }
            // Where the next frame starts: checked here, so no reader of this frame adds past it.
            let afterFrame = nextIndex + UInt64(frame.eventCount)  // both far below UInt64.max: no overflow
            guard afterFrame <= SegmentFormat.maxLogIndex + 1 else {
                throw corrupt(offset, "the frame's \(frame.eventCount) events run past the largest log index, \(SegmentFormat.maxLogIndex)")
            }
            let raw: [UInt8]
            do {
                switch frame.codec {
                case .none:
                    guard frame.rawLength == frame.storedLength else { throw DecodingError("raw and stored lengths differ") }
                    raw = Array(stored)
                case .lz4WithWindow:
                    // LZ4 expands at most 255:1; a larger claim is damage, and allocating it first would be wasteful.
                    guard UInt64(frame.rawLength) <= UInt64(frame.storedLength) * 255 + 64 else {
                        throw DecodingError("raw length \(frame.rawLength) is more than LZ4 can make of \(frame.storedLength) bytes")
                    }
                    raw = try window.withBytes { (dictionary) throws(DecodingError) in
                        try LZ4.decompress(stored, rawLength: Int(frame.rawLength), dictionary: dictionary)
                    }
                }
            } catch {
                throw corrupt(offset, "payload does not decode: \(error)")
            }
            try raw.withUnsafeBytes { payload in
                switch frame.type {
                case .events:
                    try visit(ScannedFrame(offset: offset, header: frame, payload: payload))
                case .signatures:
                    guard frame.eventCount == 0, frame.codec == .none else { throw corrupt(offset, "a signatures frame holds events or is compressed") }
                    do { _ = try SignatureRecord.decodeList(payload) } catch { throw corrupt(offset, "signature records do not decode: \(error)") }
                    try visit(ScannedFrame(offset: offset, header: frame, payload: payload))
                case .seal:
                    do { seal = try LogHead.decode(payload) } catch { throw corrupt(offset, "seal summary does not decode: \(error)") }
                    guard seal!.lastIndex == nextIndex - 1 else {
                        throw corrupt(offset, "seal says the log ends at index \(seal!.lastIndex), but the segment ends at \(nextIndex - 1)")
                    }
                }
            }
            if frame.type == .events {
                nextIndex = afterFrame
                raw.withUnsafeBytes { window.advance(past: $0) }
            }
            offset = end
        }
        if !isLast, seal == nil { throw corrupt(offset, "segment is not the newest yet has no seal frame (truncated?)") }
        return SegmentScan(validLength: offset, fileLength: fileLength, tornTail: tornTail, seal: seal, nextIndex: nextIndex, window: window)
    }
}

/// The LZ4 dictionary of a segment: the last `SegmentFormat.windowSize` uncompressed bytes of
/// its event frames so far.
///
/// Kept in a buffer up to four windows long and slid down only when that fills, so moving past
/// a frame copies the frame's bytes, not the window: copying the whole window at every frame
/// cost 16 KiB of copying per small frame (a fifth of a writer's open).
struct SegmentWindow: Sendable {
    private var buffer: [UInt8] = []

    init() {}

    /// A window holding `bytes` (a `CleanClose` record's).
    init(bytes: [UInt8]) { buffer = Array(bytes.suffix(SegmentFormat.windowSize)) }

    /// The window's bytes.
    var bytes: [UInt8] { Array(buffer.suffix(SegmentFormat.windowSize)) }

    /// Moves the window past a frame whose uncompressed payload is `raw`.
    mutating func advance(past raw: UnsafeRawBufferPointer) {
        let size = SegmentFormat.windowSize
        if raw.count >= size {
            buffer = Array(raw[(raw.count - size)...])
            return
        }
        if buffer.count + raw.count > 4 * size {
            buffer.removeFirst(buffer.count - (size - raw.count))  // what the window still needs stays
        }
        buffer.append(contentsOf: raw)
    }

    /// Calls `body` with the window's bytes: the newest `windowSize` at most.
    func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result = buffer.withUnsafeBytes { all in
            Result { () throws(E) -> R in try body(UnsafeRawBufferPointer(rebasing: all[max(0, all.count - SegmentFormat.windowSize)...])) }
        }
        return try result.get()
    }
}

/// The events inside an events frame's payload: each a varint length then its encoding.
enum EventBatch {
    /// Calls `body` with each event's bytes; throws if the lengths do not tile the payload.
    static func forEachEvent(in payload: UnsafeRawBufferPointer, count: UInt32, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        var input = ByteReader(payload)
        var seen: UInt32 = 0
        while !input.atEnd {
            let length = try input.length(max: payload.count)
            try body(try input.take(length))
            seen += 1
        }
        guard seen == count else { throw DecodingError("frame header says \(count) events, payload holds \(seen)") }
    }

    static func append(_ eventBytes: [UInt8], to payload: inout ByteWriter) {
        payload.varint(UInt64(eventBytes.count))
        payload.raw(eventBytes)
    }
}
