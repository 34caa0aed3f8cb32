import Foundation
import TallyCore

/// Writes already-encoded events into segment files of their own — a bundle for carrying to
/// another replica — in the same format as the log (frames, LZ4 window, seals), indexes
/// starting at 1. The bundle's chains need not start at sequence 1: it is not a log.
public struct SegmentFileWriter {
    private var segment: OpenSegment
    private var batch = StagedBatch()
    private let configuration: LogConfiguration

    /// Starts a bundle in `directory`. Without `head` the directory must hold no segments;
    /// with one (the seal of the last sealed segment already copied there verbatim) the next
    /// segment continues the bundle after it.
    public init(directory: String, after head: LogHead = LogHead(), segmentSizeLimit: Int = 16 << 20) throws {
        let existing = try SegmentDirectory.segmentNames(in: directory)
        guard existing.isEmpty || head.lastIndex > 0 else {
            throw LogError.rejected(reason: "\(directory) already holds segment files; export into an empty folder")
        }
        var configuration = LogConfiguration()
        configuration.segmentSizeLimit = segmentSizeLimit
        self.configuration = configuration
        let sealed = RecoveredLog(head: head, segments: existing, lastSegmentLength: 0, lastSegmentSealed: true, window: SegmentWindow(), tornTail: nil)
        segment = try OpenSegment.resume(directory: directory, recovery: sealed)
    }

    /// Adds one event (its stored bytes and decoded form).
    public mutating func append(_ bytes: UnsafeRawBufferPointer, of event: Event) {
        _ = batch.add(Array(bytes), of: event)
    }

    /// Adds signature records read beside the events: they are written after the events added so far.
    public mutating func append(_ records: [SignatureRecord]) {
        batch.signatures.append(SignaturePoint(after: batch.events.count, records: records))
    }

    /// Writes everything added, fsynced, and closes the file.
    public mutating func finish() throws {
        try segment.write(batch, configuration: configuration)
        segment.close()
        try SegmentDirectory.syncDirectory(segment.directory)
    }
}
