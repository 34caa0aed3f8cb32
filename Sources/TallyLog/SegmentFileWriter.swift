import Foundation
import TallyCore

/// Writes already-encoded events into segment files of their own — a bundle for carrying to
/// another replica — in the same format as the log (frames, LZ4 window, seals), indexes
/// starting at 1. The bundle's chains need not start at sequence 1: it is not a log.
public struct SegmentFileWriter {
    private var segment: OpenSegment
    private var batch = StagedBatch()
    private let configuration: LogConfiguration

    /// Starts a bundle in `directory`, which must exist and hold no segments.
    public init(directory: String, segmentSizeLimit: Int = 16 << 20) throws {
        guard try SegmentDirectory.segmentNames(in: directory).isEmpty else {
            throw LogError.rejected(reason: "\(directory) already holds segment files; export into an empty folder")
        }
        var configuration = LogConfiguration()
        configuration.segmentSizeLimit = segmentSizeLimit
        self.configuration = configuration
        let empty = RecoveredLog(head: LogHead(), segments: [], lastSegmentLength: 0, lastSegmentSealed: false, window: [], tornTail: nil)
        segment = try OpenSegment.resume(directory: directory, recovery: empty)
    }

    /// Adds one event (its stored bytes and decoded form).
    public mutating func append(_ bytes: UnsafeRawBufferPointer, of event: Event) {
        _ = batch.add(Array(bytes), of: event)
    }

    /// Writes everything added, fsynced, and closes the file.
    public mutating func finish() throws {
        try segment.write(batch, configuration: configuration)
        segment.close()
        try SegmentDirectory.syncDirectory(segment.directory)
    }
}
