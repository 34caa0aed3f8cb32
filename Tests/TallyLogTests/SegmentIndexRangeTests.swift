import Foundation
import Testing
@testable import TallyLog
import TallyCore
import TallyTestSupport

/// A segment's log indexes come from its name, its header and its frames — written by this
/// replica, or carried in a bundle, or read back from a damaged disk. Indexes outside 1 …
/// `SegmentFormat.maxLogIndex` are damage, refused as such: never arithmetic that wraps (a
/// bundle's segment at index 0 or 2^64 − 1 once stopped the process).
@Suite struct SegmentIndexRangeTests {
    let folder = TemporaryDirectory("tally-index-range")

    @Test func namesOutsideTheIndexRangeNameNoSegment() {
        #expect(SegmentFormat.firstIndex(fromFileName: "0000000000000001.tseg") == 1)
        #expect(SegmentFormat.firstIndex(fromFileName: "0000000000000000.tseg") == nil)
        #expect(SegmentFormat.firstIndex(fromFileName: "ffffffffffffffff.tseg") == nil)
        let largest = SegmentFormat.fileName(firstIndex: SegmentFormat.maxLogIndex)
        #expect(SegmentFormat.firstIndex(fromFileName: largest) == SegmentFormat.maxLogIndex)
        #expect(SegmentFormat.firstIndex(fromFileName: SegmentFormat.fileName(firstIndex: SegmentFormat.maxLogIndex + 1)) == nil)
    }

    /// A segment file of `frame` (its payload's checksum right) after a header of `firstIndex`, named by it.
    func segment(firstIndex: UInt64, _ type: FrameType, eventCount: UInt32, payload: [UInt8]) throws -> String {
        let frame = FrameHeader(
            type: type, codec: .none, eventCount: eventCount, firstIndex: firstIndex, rawLength: UInt32(payload.count),
            storedLength: UInt32(payload.count), payloadChecksum: CRC32C.checksum(payload))
        let path = folder.file(SegmentFormat.fileName(firstIndex: firstIndex))
        try Data(SegmentFormat.fileHeader(firstIndex: firstIndex) + frame.encoded() + payload).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func framesThatRunPastTheLargestIndexAreDamage() throws {
        let path = try segment(firstIndex: SegmentFormat.maxLogIndex, .events, eventCount: 3, payload: [1, 2, 3, 4])
        #expect {
            _ = try SegmentScanner.scan(path: path, isLast: true) { _ in }
        } throws: { "\($0)".contains("run past the largest log index") }
        // A reader of the folder refuses it the same way, before it counts the frame's events.
        #expect {
            try LogReader(directory: folder.path).forEachEvent { _ in }
        } throws: { "\($0)".contains("run past the largest log index") }
    }

    @Test func aSegmentAtIndexZeroIsDamage() throws {
        // A seal at index 0 would say the segment ends at index −1.
        let path = try segment(firstIndex: 0, .seal, eventCount: 0, payload: LogHead().encoded())
        #expect {
            _ = try SegmentScanner.scan(path: path, isLast: true) { _ in }
        } throws: { "\($0)".contains("file name says otherwise") }
        #expect(try LogReader(directory: folder.path).segmentNames().isEmpty, "no segment's name")
    }
}
