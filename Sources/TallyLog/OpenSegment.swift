import Foundation
import TallyCore

/// What a flush will write: frames for the open segment, and the points where it is sealed
/// and the next segment starts. Planned in memory first (see `OpenSegment.plan`), so a bulk
/// append can compress on another thread and still write nothing if a draft is rejected.
struct SegmentWritePlan {
    enum Step {
        /// Bytes to append to the current segment.
        case write([UInt8])
        /// Fsync, make read-only and close the current segment (its seal frame was the last
        /// write), then create the segment whose first event has this index.
        case sealAndStartNext(firstIndex: UInt64)
    }

    var steps: [Step] = []
}

/// The newest segment, open for appending. Only the writer's current flusher uses it.
struct OpenSegment {
    let directory: String
    private(set) var path: String
    private var descriptor: Int32
    /// The size it is planned to have (`plan` moves it on as if its frames were written).
    private var size: Int
    /// The size it has on disk: where `perform`'s first write goes.
    private var fileLength: Int
    /// Where every write goes first (`SegmentArchive`), if anywhere.
    private let archive: (any SegmentArchive)?
    private var window: SegmentWindow
    /// Index the next written event gets.
    private var nextIndex: UInt64
    /// The head as of the last event written (what a seal records).
    private var writtenHead: LogHead
    private let compressor = LZ4.Stream()

    /// Continues the newest segment after recovery, or starts one if there is none or it is sealed.
    static func resume(directory: String, recovery: RecoveredLog, archive: (any SegmentArchive)? = nil) throws -> OpenSegment {
        let nextIndex = recovery.head.lastIndex + 1
        if let name = recovery.segments.last, !recovery.lastSegmentSealed {
            let path = directory + "/" + name
            let fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
            guard fd >= 0 else { throw LogError.io(operation: "open", path: path, errno: errno) }
            return OpenSegment(
                directory: directory, path: path, descriptor: fd, size: recovery.lastSegmentLength, fileLength: recovery.lastSegmentLength,
                archive: archive, window: recovery.window, nextIndex: nextIndex, writtenHead: recovery.head)
        }
        let fd = try SegmentDirectory.createSegment(in: directory, firstIndex: nextIndex)
        return OpenSegment(
            directory: directory, path: directory + "/" + SegmentFormat.fileName(firstIndex: nextIndex), descriptor: fd,
            size: SegmentFormat.fileHeaderSize, fileLength: SegmentFormat.fileHeaderSize, archive: archive, window: SegmentWindow(),
            nextIndex: nextIndex, writtenHead: recovery.head)
    }

    /// Writes a staged batch as frames (sealing and starting segments as they fill) with its
    /// signature points among them, then `signatures` in one signatures frame, and fdatasyncs.
    mutating func write(_ batch: StagedBatch, signatures: [SignatureRecord] = [], configuration: LogConfiguration) throws {
        guard !batch.events.isEmpty || !signatures.isEmpty || !batch.signatures.isEmpty else { return }
        var plan = SegmentWritePlan()
        self.plan(batch, configuration: configuration, into: &plan)
        planSignatures(signatures, into: &plan)
        try perform(plan)
    }

    /// Plans a signatures frame (type 3, stored raw, no events: it takes no log index and does
    /// not move the LZ4 window) after the frames planned so far.
    mutating func planSignatures(_ records: [SignatureRecord], into plan: inout SegmentWritePlan) {
        // Frames of at most 4,096 records (~700 KiB): far below what a reader accepts (8 MiB).
        for start in stride(from: 0, to: records.count, by: 4_096) {
            planSignatureFrame(Array(records[start..<min(start + 4_096, records.count)]), into: &plan)
        }
    }

    private mutating func planSignatureFrame(_ records: [SignatureRecord], into plan: inout SegmentWritePlan) {
        let payload = SignatureRecord.encodeList(records)
        let header = FrameHeader(
            type: .signatures, codec: .none, eventCount: 0, firstIndex: nextIndex, rawLength: UInt32(payload.count),
            storedLength: UInt32(payload.count), payloadChecksum: CRC32C.checksum(payload))
        let frame = header.encoded() + payload
        size += frame.count
        plan.steps.append(.write(frame))
    }

    /// Compresses a staged batch into frames appended to `plan`, deciding where segments roll,
    /// without touching the disk. The segment's bookkeeping (size, window, next index, head)
    /// moves on as if the frames were written, so the plan is only valid for this segment value.
    /// The batch's signature points get a signatures frame each, right after the events they follow.
    mutating func plan(_ batch: StagedBatch, configuration: LogConfiguration, into plan: inout SegmentWritePlan) {
        var first = 0
        var points = batch.signatures[...]
        while let point = points.first, point.after <= 0 {
            planSignatures(point.records, into: &plan)
            points.removeFirst()
        }
        while first < batch.events.count {
            if size >= configuration.segmentSizeLimit, size > SegmentFormat.fileHeaderSize {
                planSealAndNext(into: &plan)
            }
            let start = first == 0 ? 0 : batch.events[first - 1].end
            let end = min(points.first?.after ?? batch.events.count, batch.events.count)  // a frame stops at the next point
            var last = first
            while last + 1 < end, batch.events[last + 1].end - start <= SegmentFormat.maxFrameRawSize { last += 1 }
            var frame = ByteWriter(capacity: 0)
            batch.bytes.bytes.withUnsafeBytes { all in
                appendEventsFrame(UnsafeRawBufferPointer(rebasing: all[start..<batch.events[last].end]), count: last - first + 1, to: &frame)
            }
            size += frame.bytes.count
            plan.steps.append(.write(frame.bytes))
            for event in batch.events[first...last] {
                writtenHead.advance(origin: event.origin, sequence: event.sequence, timestamp: event.timestamp, hash: event.hash)
            }
            first = last + 1
            while let point = points.first, point.after <= first {
                planSignatures(point.records, into: &plan)
                points.removeFirst()
            }
        }
        for point in points { planSignatures(point.records, into: &plan) }
    }

    /// Writes what `plan` planned (creating the segments it rolls to) and fdatasyncs — after
    /// the archive, if there is one, took every byte of it.
    mutating func perform(_ plan: SegmentWritePlan) throws {
        if let archive {
            do { try archive.archive(appends(of: plan)) } catch { throw LogError.notArchived(cause: "\(error)") }
        }
        for step in plan.steps {
            switch step {
            case .write(let bytes):
                let path = self.path, fd = descriptor
                try bytes.withUnsafeBytes { try SegmentDirectory.writeAll(fd, $0, path: path) }
                fileLength += bytes.count
            case .sealAndStartNext(let firstIndex):
                guard fdatasync(descriptor) == 0 else { throw LogError.io(operation: "fdatasync", path: path, errno: errno) }
                fchmod(descriptor, 0o444)
                Glibc.close(descriptor)
                descriptor = -1
                descriptor = try SegmentDirectory.createSegment(in: directory, firstIndex: firstIndex)
                path = directory + "/" + SegmentFormat.fileName(firstIndex: firstIndex)
                fileLength = SegmentFormat.fileHeaderSize
            }
        }
        guard fdatasync(descriptor) == 0 else { throw LogError.io(operation: "fdatasync", path: path, errno: errno) }
    }

    /// What `plan` appends to which segment file, and where.
    private func appends(of plan: SegmentWritePlan) -> [SegmentAppend] {
        var appends: [SegmentAppend] = []
        var (name, offset) = (String(path.split(separator: "/").last ?? ""), fileLength)
        for step in plan.steps {
            switch step {
            case .write(let bytes):
                appends.append(SegmentAppend(segment: name, offset: offset, bytes: bytes))
                offset += bytes.count
            case .sealAndStartNext(let firstIndex):
                // The seal frame was the step before (`planSealAndNext`).
                let next = SegmentFormat.fileName(firstIndex: firstIndex)
                if let last = appends.popLast() {
                    appends.append(SegmentAppend(segment: last.segment, offset: last.offset, bytes: last.bytes, nextSegment: next))
                }
                (name, offset) = (next, SegmentFormat.fileHeaderSize)
            }
        }
        return appends
    }

    /// Appends one frame (header, then the payload compressed against the window, or raw
    /// when that is not smaller) to `out`, and advances index and window.
    private mutating func appendEventsFrame(_ raw: UnsafeRawBufferPointer, count: Int, to out: inout ByteWriter) {
        let headerStart = out.bytes.count
        let payloadStart = headerStart + SegmentFormat.frameHeaderSize
        out.bytes.append(contentsOf: repeatElement(0, count: SegmentFormat.frameHeaderSize + LZ4.bound(raw.count)))
        let compressedSize = out.bytes.withUnsafeMutableBytes { buffer in
            window.withBytes {
                LZ4.compress(raw, into: UnsafeMutableRawBufferPointer(rebasing: buffer[payloadStart...]), dictionary: $0, stream: compressor)
            }
        }
        let storedSize = compressedSize ?? raw.count
        out.bytes.removeSubrange((payloadStart + storedSize)...)
        if compressedSize == nil {
            out.bytes.withUnsafeMutableBytes { UnsafeMutableRawBufferPointer(rebasing: $0[payloadStart...]).copyMemory(from: raw) }
        }
        let checksum = out.bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[payloadStart...])) }
        let header = FrameHeader(
            type: .events, codec: compressedSize == nil ? .none : .lz4WithWindow, eventCount: UInt32(count), firstIndex: nextIndex,
            rawLength: UInt32(raw.count), storedLength: UInt32(storedSize), payloadChecksum: checksum)
        out.bytes.replaceSubrange(headerStart..<payloadStart, with: header.encoded())
        nextIndex += UInt64(count)
        window.advance(past: raw)
    }

    /// Plans the end of this segment: a seal frame (the head as of its last event), then a new
    /// segment starting at the next index.
    private mutating func planSealAndNext(into plan: inout SegmentWritePlan) {
        let summary = writtenHead.encoded()
        let header = FrameHeader(
            type: .seal, codec: .none, eventCount: 0, firstIndex: nextIndex, rawLength: UInt32(summary.count),
            storedLength: UInt32(summary.count), payloadChecksum: CRC32C.checksum(summary))
        plan.steps.append(.write(header.encoded() + summary))
        plan.steps.append(.sealAndStartNext(firstIndex: nextIndex))
        size = SegmentFormat.fileHeaderSize
        window = SegmentWindow()
    }

    /// Points the segment's descriptor at /dev/full, so the next write fails with ENOSPC as on a
    /// full disk (tests only; dup2 keeps the number, so no other file can be hit by mistake).
    func fillDiskForTesting() {
        let full = open("/dev/full", O_WRONLY | O_CLOEXEC)
        dup2(full, descriptor)
        Glibc.close(full)
    }

    /// Where this segment ends and what continues it, for the next writer (`CleanClose`); nil
    /// while the segment is smaller than `threshold` (`LogConfiguration.cleanCloseFrom`), or when the file at this segment's path is not the one this writer holds open (its folder
    /// was moved aside — a hosted ledger trashed while open — and another log is there now).
    func cleanClose(from threshold: Int) throws -> CleanClose? {
        guard size >= threshold else { return nil }
        var held = stat(), named = stat()
        guard descriptor >= 0, fstat(descriptor, &held) == 0, stat(path, &named) == 0, held.st_dev == named.st_dev, held.st_ino == named.st_ino
        else { return nil }
        return try CleanClose.of(directory, head: writtenHead, window: window.bytes)
    }

    mutating func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }
}
