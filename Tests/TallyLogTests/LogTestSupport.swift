import Foundation
@testable import TallyLog
import TallyCore
import TallyTestSupport

/// A log in a temporary directory with its two origins.
struct TestLog {
    let directory = TemporaryDirectory("tally-log")
    let origin = ReplicaID.random()
    let localOnlyOrigin = ReplicaID.random()
    var segmentSize = 16 << 20
    /// Where a signed writer's key lives (`openWriter(signed: true)`).
    let keys = TemporaryDirectory("tally-key")

    /// A writer over the test's log. The default waits up to 5 s for the lock: a lock just
    /// released can still be held for an instant by a child process another test is spawning
    /// (the descriptor is shared until the child's exec closes it), which made reopen-in-a-loop
    /// tests flaky under a loaded suite.
    ///
    /// `signed`: with a signing key, as a data directory's writer (which leaves a `CleanClose`
    /// record when it closes).
    func openWriter(lockTimeout: Double = 5, signed: Bool = false) throws -> LogWriter {
        var configuration = LogConfiguration()
        configuration.segmentSizeLimit = segmentSize
        configuration.lockTimeout = lockTimeout
        configuration.cleanCloseFrom = 0  // every clean close leaves its record here
        return try LogWriter(
            directory: directory.path, localOrigin: origin, localOnlyOrigin: localOnlyOrigin, configuration: configuration,
            signingKeyPath: signed ? keys.path + "/replica.key" : nil)
    }

    func events() throws -> [LoggedEvent] {
        var events: [LoggedEvent] = []
        try LogReader(directory: directory.path).forEachEvent { events.append($0) }
        return events
    }

    func segmentPaths() throws -> [String] {
        try SegmentDirectory.segmentNames(in: directory.path).map { directory.path + "/" + $0 }
    }

    /// Appends `count` expense creates, one append call each (so one frame each).
    @discardableResult
    func appendExpenses(_ count: Int, writer: LogWriter) throws -> [Event] {
        try (0..<count).flatMap { try writer.append([SampleEvents.expenseCreate(amount: Int64($0 + 1))]) }
    }
}

/// Rewrites a segment file the way a careful tamperer would: events re-framed with valid
/// checksums and contiguous indexes, so only the hash chain can tell.
enum SegmentRewriter {
    static func eventBytes(of path: String) throws -> [[UInt8]] {
        var events: [[UInt8]] = []
        _ = try SegmentScanner.scan(path: path, isLast: true) { frame in
            try EventBatch.forEachEvent(in: frame.payload, count: frame.header.eventCount) { events.append(Array($0)) }
        }
        return events
    }

    static func rewrite(_ path: String, _ change: (inout [[UInt8]]) throws -> Void) throws {
        var events = try eventBytes(of: path)
        try change(&events)
        let firstIndex = SegmentFormat.firstIndex(fromFileName: (path as NSString).lastPathComponent)!
        var out = SegmentFormat.fileHeader(firstIndex: firstIndex)
        for (offset, event) in events.enumerated() {
            var payload = ByteWriter()
            EventBatch.append(event, to: &payload)
            let header = FrameHeader(
                type: .events, codec: .none, eventCount: 1, firstIndex: firstIndex + UInt64(offset),
                rawLength: UInt32(payload.bytes.count), storedLength: UInt32(payload.bytes.count),
                payloadChecksum: CRC32C.checksum(payload.bytes))
            out += header.encoded() + payload.bytes
        }
        chmod(path, 0o644)
        try Data(out).write(to: URL(fileURLWithPath: path))
    }
}
