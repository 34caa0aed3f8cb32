import Foundation
import TallyCore

/// The newest segment, open for appending. Only the writer's current flusher uses it.
struct OpenSegment {
    let directory: String
    private(set) var path: String
    private var descriptor: Int32
    private var size: Int
    private var window: [UInt8]
    /// Index the next written event gets.
    private var nextIndex: UInt64
    /// The head as of the last event written (what a seal records).
    private var writtenHead: LogHead

    /// Continues the newest segment after recovery, or starts one if there is none or it is sealed.
    static func resume(directory: String, recovery: RecoveredLog) throws -> OpenSegment {
        let nextIndex = recovery.head.lastIndex + 1
        if let name = recovery.segments.last, !recovery.lastSegmentSealed {
            let path = directory + "/" + name
            let fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
            guard fd >= 0 else { throw LogError.io(operation: "open", path: path, errno: errno) }
            return OpenSegment(directory: directory, path: path, descriptor: fd, size: recovery.lastSegmentLength,
                               window: recovery.window, nextIndex: nextIndex, writtenHead: recovery.head)
        }
        let fd = try SegmentDirectory.createSegment(in: directory, firstIndex: nextIndex)
        return OpenSegment(directory: directory, path: directory + "/" + SegmentFormat.fileName(firstIndex: nextIndex), descriptor: fd,
                           size: SegmentFormat.fileHeaderSize, window: [], nextIndex: nextIndex, writtenHead: recovery.head)
    }

    /// Writes a staged batch as frames (sealing and starting segments as they fill) and fdatasyncs.
    mutating func write(_ batch: StagedBatch, configuration: LogConfiguration) throws {
        guard !batch.events.isEmpty else { return }
        var out = ByteWriter(capacity: batch.bytes.bytes.count / 2 + 4096)
        var first = 0
        while first < batch.events.count {
            if size + out.bytes.count >= configuration.segmentSizeLimit, size + out.bytes.count > SegmentFormat.fileHeaderSize {
                try flush(&out)
                try sealAndStartNext()
            }
            let start = first == 0 ? 0 : batch.events[first - 1].end
            var last = first
            while last + 1 < batch.events.count, batch.events[last + 1].end - start <= SegmentFormat.maxFrameRawSize { last += 1 }
            let raw = batch.bytes.bytes[start..<batch.events[last].end]
            out.raw(encodeEventsFrame(raw, count: last - first + 1))
            for event in batch.events[first...last] {
                writtenHead.advance(origin: event.origin, sequence: event.sequence, timestamp: event.timestamp, hash: event.hash)
            }
            first = last + 1
        }
        try flush(&out)
        guard fdatasync(descriptor) == 0 else { throw LogError.io(operation: "fdatasync", path: path, errno: errno) }
    }

    /// Compresses one frame against the window and advances index and window.
    private mutating func encodeEventsFrame(_ raw: ArraySlice<UInt8>, count: Int) -> [UInt8] {
        let compressed = raw.withUnsafeBytes { source in window.withUnsafeBytes { LZ4.compress(source, dictionary: $0) } }
        let stored = compressed ?? Array(raw)
        let header = FrameHeader(
            type: .events, codec: compressed == nil ? .none : .lz4WithWindow, eventCount: UInt32(count), firstIndex: nextIndex,
            rawLength: UInt32(raw.count), storedLength: UInt32(stored.count), payloadChecksum: CRC32C.checksum(stored))
        nextIndex += UInt64(count)
        window = SegmentWindow.advance(window, with: Array(raw))
        return header.encoded() + stored
    }

    private mutating func flush(_ out: inout ByteWriter) throws {
        guard !out.bytes.isEmpty else { return }
        let path = self.path, fd = descriptor
        try out.bytes.withUnsafeBytes { try SegmentDirectory.writeAll(fd, $0, path: path) }
        size += out.bytes.count
        out.bytes.removeAll(keepingCapacity: true)
    }

    /// Ends the segment with a seal frame (the head as of its last event), makes it read-only,
    /// and starts the next one.
    private mutating func sealAndStartNext() throws {
        let summary = writtenHead.encoded()
        let header = FrameHeader(type: .seal, codec: .none, eventCount: 0, firstIndex: nextIndex, rawLength: UInt32(summary.count),
                                 storedLength: UInt32(summary.count), payloadChecksum: CRC32C.checksum(summary))
        var out = ByteWriter()
        out.raw(header.encoded())
        out.raw(summary)
        try flush(&out)
        guard fdatasync(descriptor) == 0 else { throw LogError.io(operation: "fdatasync", path: path, errno: errno) }
        fchmod(descriptor, 0o444)
        Glibc.close(descriptor)
        descriptor = -1
        descriptor = try SegmentDirectory.createSegment(in: directory, firstIndex: nextIndex)
        path = directory + "/" + SegmentFormat.fileName(firstIndex: nextIndex)
        size = SegmentFormat.fileHeaderSize
        window = []
    }

    /// Points the segment's descriptor at /dev/full, so the next write fails with ENOSPC as on a
    /// full disk (tests only; dup2 keeps the number, so no other file can be hit by mistake).
    func fillDiskForTesting() {
        let full = open("/dev/full", O_WRONLY | O_CLOEXEC)
        dup2(full, descriptor)
        Glibc.close(full)
    }

    mutating func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }
}
