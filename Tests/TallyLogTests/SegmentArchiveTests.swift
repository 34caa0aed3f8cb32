import Foundation
import Synchronization
import Testing
import TallyCore
@testable import TallyLog
import TallyTestSupport

/// `SegmentArchive`: every byte a writer appends goes to the archive first, as the frames
/// stored, and nothing the archive refused reaches the disk (issue 32's acknowledged-means-
/// archived rests on this).
@Suite struct SegmentArchiveTests {
    /// Keeps what it is handed; refuses from the `refuseFrom`-th call on.
    final class RecordingArchive: SegmentArchive {
        let appends = Mutex<[SegmentAppend]>([])
        let calls = Atomic<Int>(0)
        let refuseFrom: Int

        init(refuseFrom: Int = .max) { self.refuseFrom = refuseFrom }

        struct Refused: Error {}

        func archive(_ appends: [SegmentAppend]) throws {
            let call = calls.add(1, ordering: .relaxed).newValue
            guard call < refuseFrom else { throw Refused() }
            self.appends.withLock { $0.append(contentsOf: appends) }
        }
    }

    func openWriter(_ log: TestLog, archive: RecordingArchive) throws -> LogWriter {
        var configuration = LogConfiguration()
        configuration.segmentSizeLimit = log.segmentSize
        configuration.archive = archive
        return try LogWriter(
            directory: log.directory.path, localOrigin: log.origin, localOnlyOrigin: log.localOnlyOrigin, configuration: configuration,
            signingKeyPath: log.keys.path + "/replica.key")
    }

    /// The segment files of `directory`, name and bytes.
    func files(_ directory: String) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in try SegmentDirectory.segmentNames(in: directory) {
            files[name] = Array(try #require(FileManager.default.contents(atPath: directory + "/" + name)))
        }
        return files
    }

    @Test func theArchiveReplayedIsTheLogByteForByteAcrossSegmentsBulkAndReopens() throws {
        var log = TestLog()
        log.segmentSize = 4_096  // many segments, sealed as they fill
        let archive = RecordingArchive()
        let writer = try openWriter(log, archive: archive)
        try log.appendExpenses(40, writer: writer)
        _ = try writer.appendBulk((0..<500).map { SampleEvents.expenseCreate(amount: Int64($0 + 1)) })
        writer.close()
        let reopened = try openWriter(log, archive: archive)  // a signed head at open, if needed, goes through it too
        try log.appendExpenses(5, writer: reopened)
        reopened.close()

        let replica = TemporaryDirectory("tally-archive-replay")
        try SegmentAppend.replay(archive.appends.withLock { $0 }, into: replica.path)
        let (original, replayed) = (try files(log.directory.path), try files(replica.path))
        #expect(original.count > 3, "the test rolled segments")
        #expect(replayed == original)
        #expect(archive.appends.withLock { $0.filter(\.seals).count } == original.count - 1, "every segment but the newest sealed")
        #expect(try LogVerifier.verify(directory: replica.path).findings.isEmpty)
        let last = try #require(archive.appends.withLock { $0.last })
        let end = LogEnd(segment: last.segment, length: last.offset + last.bytes.count, sealed: last.seals)
        #expect(try LogEnd.of(logDirectory: log.directory.path) == end)
        #expect(try LogEnd.of(logDirectory: replica.path) == end)
        let empty = TemporaryDirectory("tally-archive-empty")
        #expect(try LogEnd.of(logDirectory: empty.path) == nil)
        var events = 0
        try LogReader(directory: replica.path).forEachEvent { _ in events += 1 }
        #expect(events == 545)
    }

    @Test func whatTheArchiveRefusesNeverReachesTheDiskAndTheWriterStops() throws {
        let log = TestLog()
        let archive = RecordingArchive(refuseFrom: 4)
        let writer = try openWriter(log, archive: archive)
        try log.appendExpenses(3, writer: writer)  // calls 1-3 (no head signature on a new log)
        let before = try files(log.directory.path)
        #expect(throws: (any Error).self) { try writer.append([SampleEvents.expenseCreate(amount: 4)]) }
        #expect(try files(log.directory.path) == before, "nothing of the refused write is on disk")
        #expect(throws: LogError.self) { try writer.append([SampleEvents.expenseCreate(amount: 5)]) }  // stopped, as after a failed fsync
        writer.close()
        #expect(try log.events().count == 3)

        // What the archive holds is the log: replayed, the same three events.
        let replica = TemporaryDirectory("tally-archive-refused")
        try SegmentAppend.replay(archive.appends.withLock { $0 }, into: replica.path)
        #expect(try files(replica.path) == before)
    }

    @Test func replayRefusesAppendsThatDoNotFollowTheFile() throws {
        let log = TestLog()
        let archive = RecordingArchive()
        let writer = try openWriter(log, archive: archive)
        try log.appendExpenses(2, writer: writer)
        writer.close()
        let appends = archive.appends.withLock { $0 }
        let replica = TemporaryDirectory("tally-archive-gap")
        #expect(throws: LogError.self) { try SegmentAppend.replay(Array(appends.dropFirst()), into: replica.path) }
        let other = TemporaryDirectory("tally-archive-name")
        // Only the name `SegmentFormat.fileName` gives is a segment's (also for a bundle's manifest).
        #expect(SegmentFormat.firstIndex(fromFileName: "000000000000000a.tseg") == 10)
        for name in ["+00000000000000a.tseg", "000000000000000A.tseg", "-00000000000000a.tseg"] {
            #expect(SegmentFormat.firstIndex(fromFileName: name) == nil, "\(name)")
        }
        for name in ["../escape", "+000000000000001.tseg", "0000000000000001.tseg/", ""] {
            let bad = SegmentAppend(segment: name, offset: SegmentFormat.fileHeaderSize, bytes: [1])
            #expect(throws: LogError.self, "\(name)") { try SegmentAppend.replay([bad], into: other.path) }
        }
        #expect(try SegmentDirectory.segmentNames(in: other.path).isEmpty, "no file made for a name that is not a segment's")

        // The order a writer keeps: the first segment first, a segment sealed before the next,
        // and only the segment its seal names next.
        let (one, five, nine) = (SegmentFormat.fileName(firstIndex: 1), SegmentFormat.fileName(firstIndex: 5), SegmentFormat.fileName(firstIndex: 9))
        let header = SegmentFormat.fileHeaderSize
        let ordered = TemporaryDirectory("tally-archive-order")
        #expect(throws: LogError.self) { try SegmentAppend.replay([SegmentAppend(segment: five, offset: header, bytes: [1])], into: ordered.path) }
        try SegmentAppend.replay([SegmentAppend(segment: one, offset: header, bytes: [1])], into: ordered.path)
        // A later segment while the first is not sealed:
        #expect(throws: LogError.self) { try SegmentAppend.replay([SegmentAppend(segment: nine, offset: header, bytes: [1])], into: ordered.path) }
        #expect(throws: LogError.self) {
            try SegmentAppend.replay(
                [SegmentAppend(segment: one, offset: header + 1, bytes: [2], nextSegment: nine), SegmentAppend(segment: five, offset: header, bytes: [3])],
                into: ordered.path)  // the seal named nine
        }
        let sealed = TemporaryDirectory("tally-archive-sealed")
        try SegmentAppend.replay(
            [SegmentAppend(segment: one, offset: header, bytes: [1], nextSegment: nine), SegmentAppend(segment: nine, offset: header, bytes: [2])],
            into: sealed.path)
        #expect(throws: LogError.self) { try SegmentAppend.replay([SegmentAppend(segment: one, offset: header + 1, bytes: [3])], into: sealed.path) }  // sealed
        #expect(try LogEnd.of(logDirectory: sealed.path) == LogEnd(segment: nine, length: header + 1, sealed: false))
    }
}
