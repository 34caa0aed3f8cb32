import Foundation
import TallyCore

/// What opening a log found: where it ends, and whether a torn tail was cut.
public struct RecoveredLog: Sendable {
    /// The log's head after recovery.
    public var head: LogHead
    /// File names of all segments, oldest first.
    public var segments: [String]
    /// Valid length of the newest segment.
    var lastSegmentLength: Int
    /// Whether the newest segment is sealed (a crash came between sealing and starting the next).
    var lastSegmentSealed: Bool
    /// LZ4 window after the newest segment's last frame.
    var window: SegmentWindow
    /// A description of the torn tail that was found (and cut, if the opener was the writer).
    public var tornTail: String?
    /// Origins with events in the newest segment after the last signed head of theirs there
    /// (a crash cut the signatures frame that followed them, or the log predates signing).
    var unsignedOrigins: Set<ReplicaID> = []
    /// Key rotations in the newest segment, in order (to finish a rotation a crash interrupted).
    var rotations: [KeyRotation] = []
    /// Taken from the record a clean close left (`CleanClose`), not decoded from the log.
    public var fromCleanClose = false
}

/// Opening a log: checks every frame's checksum in every segment, rebuilds the head from the
/// last seal plus the open segment's events, and classifies trouble at the end (LOG_FORMAT.md §4).
enum LogRecovery {
    /// Scans the log in `directory`. With `cutTornTail` (the writer), a torn tail is truncated
    /// away and the file fsynced; otherwise it is only reported.
    ///
    /// `knownHead`: the head of files the caller has just verified event by event (adopted
    /// segments) — the open segment's events are then not decoded again, only its frames checked.
    ///
    /// `trustingCleanClose` (a writer's open): if the last writer closed cleanly and the log is
    /// still as it left it, its record (`CleanClose`) is taken instead of reading the log.
    static func recover(directory: String, cutTornTail: Bool, knownHead: LogHead? = nil, trustingCleanClose: Bool = false) throws -> RecoveredLog {
        let names = try SegmentDirectory.segmentNames(in: directory)
        if trustingCleanClose, let record = CleanClose.take(from: directory, segments: names) { return record.recovered }
        var head = LogHead()
        var nextIndex: UInt64 = 1
        var last = RecoveredLog(head: head, segments: names, lastSegmentLength: 0, lastSegmentSealed: false, window: SegmentWindow(), tornTail: nil)
        var seenInLast: [ReplicaID: UInt64] = [:]  // each origin's last sequence in the newest segment
        for (position, name) in names.enumerated() {
            let path = directory + "/" + name
            let isLast = position == names.count - 1
            guard SegmentFormat.firstIndex(fromFileName: name) == nextIndex else {
                throw LogError.corrupt(
                    segment: name, offset: 0,
                    reason: "segment starts at index \(SegmentFormat.firstIndex(fromFileName: name)!), expected \(nextIndex) (a segment is missing)")
            }
            // Sealed segments carry the head in their seal, so only the open one is decoded.
            var signedThrough: [ReplicaID: UInt64] = [:]
            var rotations: [KeyRotation] = []
            let scan = try SegmentScanner.scan(path: path, isLast: isLast) { frame in
                guard isLast, knownHead == nil else { return }
                if frame.header.type == .signatures {
                    for record in try SignatureRecord.decodeList(frame.payload) {
                        switch record {
                        case .head(let signed): signedThrough[signed.origin] = max(signedThrough[signed.origin] ?? 0, signed.sequence)
                        case .rotation(let rotation): rotations.append(rotation)
                        }
                    }
                    return
                }
                do {
                    try EventBatch.forEachEvent(in: frame.payload, count: frame.header.eventCount) { bytes in
                        let event = try EventCodec.decode(bytes)
                        let expected = (head.chains[event.origin]?.sequence ?? 0) + 1
                        guard event.sequence == expected, event.previousHash == (head.chains[event.origin]?.hash ?? .zero) else {
                            throw DecodingError("event \(event.origin) #\(event.sequence) does not continue its origin's chain (expected #\(expected))")
                        }
                        head.advance(past: event, hash: EventCodec.hash(bytes))
                        seenInLast[event.origin] = event.sequence
                    }
                } catch let error as DecodingError {
                    throw LogError.corrupt(segment: name, offset: frame.offset, reason: error.description)
                }
            }
            if let seal = scan.seal { head = seal }
            nextIndex = scan.nextIndex
            if isLast {
                last.lastSegmentLength = scan.validLength
                last.lastSegmentSealed = scan.seal != nil
                last.window = scan.window
                last.tornTail = scan.tornTail
                last.rotations = rotations
                if scan.seal == nil {
                    last.unsignedOrigins = Set(
                        head.chains.filter { origin, chain in
                            chain.sequence > (signedThrough[origin] ?? 0) && (seenInLast[origin] ?? 0) > (signedThrough[origin] ?? 0)
                        }.keys)
                }
                if scan.tornTail != nil, cutTornTail {
                    try truncate(path: path, to: scan.validLength)
                }
            }
        }
        if let knownHead {
            guard knownHead.lastIndex == nextIndex - 1 else {
                throw LogError.brokenInvariant(reason: "the segments hold events up to index \(nextIndex - 1), the verified head says \(knownHead.lastIndex)")
            }
            head = knownHead
        }
        last.head = head
        return last
    }

    private static func truncate(path: String, to length: Int) throws(LogError) {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw LogError.io(operation: "open", path: path, errno: errno) }
        defer { close(fd) }
        guard ftruncate(fd, off_t(length)) == 0 else { throw LogError.io(operation: "truncate", path: path, errno: errno) }
        guard fsync(fd) == 0 else { throw LogError.io(operation: "fsync", path: path, errno: errno) }
    }
}
