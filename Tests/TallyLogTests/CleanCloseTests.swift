import Foundation
import PropertyBased
import Testing
@testable import TallyLog
import TallyCore
import TallyTestSupport

/// `CleanClose`: a writer's clean close lets the next open skip decoding the log — and only
/// while every segment is byte for byte what that writer left.
@Suite struct CleanCloseTests {
    private func record(_ log: TestLog) -> String { log.directory.file(CleanClose.fileName) }

    /// The head a full recovery finds, without taking any record.
    private func fullRecovery(_ log: TestLog) throws -> RecoveredLog {
        try LogRecovery.recover(directory: log.directory.path, cutTornTail: false)
    }

    @Test func theNextOpenTakesTheRecordAndContinuesTheLogExactly() throws {
        let log = TestLog()
        let writer = try log.openWriter(signed: true)
        try log.appendExpenses(50, writer: writer)
        writer.close()
        #expect(FileManager.default.fileExists(atPath: record(log)))
        let full = try fullRecovery(log)

        let reopened = try log.openWriter(signed: true)
        #expect(reopened.recovery.fromCleanClose)
        #expect(reopened.head == full.head)
        #expect(reopened.recovery.lastSegmentLength == full.lastSegmentLength)
        #expect(reopened.recovery.window.bytes == full.window.bytes)
        #expect(!FileManager.default.fileExists(atPath: record(log)), "taken: it serves one open")
        // Appends compressed against the record's window read back from scratch.
        try log.appendExpenses(10, writer: reopened)
        reopened.close()
        #expect(try log.events().map(\.event.sequence) == Array(1...60))
        #expect(try LogVerifier.verify(directory: log.directory.path).findings.isEmpty)
    }

    /// Below `LogConfiguration.cleanCloseFrom`, a close leaves no record (decoding a small
    /// segment costs less); above it, it does.
    @Test func aSmallSegmentIsLeftWithoutARecord() throws {
        let log = TestLog()
        var configuration = LogConfiguration()
        configuration.cleanCloseFrom = 4_096
        func open() throws -> LogWriter {
            try LogWriter(
                directory: log.directory.path, localOrigin: log.origin, localOnlyOrigin: log.localOnlyOrigin, configuration: configuration,
                signingKeyPath: log.keys.path + "/replica.key")
        }
        let writer = try open()
        try log.appendExpenses(2, writer: writer)
        writer.close()
        #expect(!FileManager.default.fileExists(atPath: record(log)))
        let again = try open()
        try log.appendExpenses(40, writer: again)
        again.close()
        #expect(try FileManager.default.attributesOfItem(atPath: try log.segmentPaths()[0])[.size] as! Int >= 4_096)
        #expect(FileManager.default.fileExists(atPath: record(log)))
    }

    @Test func onlyASignedWriterThatNeverFailedLeavesARecord() throws {
        let bare = TestLog()
        let unsigned = try bare.openWriter()
        try bare.appendExpenses(3, writer: unsigned)
        unsigned.close()
        #expect(!FileManager.default.fileExists(atPath: record(bare)))

        let full = TestLog()
        let failing = try full.openWriter(signed: true)
        try full.appendExpenses(3, writer: failing)
        failing.segment.fillDiskForTesting()
        #expect(throws: (any Error).self) { try failing.append([SampleEvents.expenseCreate()]) }
        failing.close()
        #expect(!FileManager.default.fileExists(atPath: record(full)))

        let rotated = TestLog()
        let rotating = try rotated.openWriter(signed: true)
        try rotated.appendExpenses(3, writer: rotating)
        _ = try rotating.rotateKey(to: ReplicaSigningKey.generate()) {}
        rotating.close()
        #expect(!FileManager.default.fileExists(atPath: record(rotated)), "a rotation is read from the log, as after a crash")
    }

    /// A log moved aside while its writer is open (a hosted ledger trashed, another made under
    /// its name): the writer's close leaves no record in the new log's folder — one describing
    /// its own head beside the new log's segments would have had the next writer append after
    /// events that are not there (found by the hosting tests).
    @Test func aWriterWhoseFolderWasMovedAsideLeavesNothingInTheNewOne() throws {
        let log = TestLog()
        let writer = try log.openWriter(signed: true)
        try log.appendExpenses(3, writer: writer)
        let aside = log.directory.path + "-aside"
        defer { try? FileManager.default.removeItem(atPath: aside) }
        try FileManager.default.moveItem(atPath: log.directory.path, toPath: aside)
        try FileManager.default.createDirectory(atPath: log.directory.path, withIntermediateDirectories: false)
        let newcomer = try log.openWriter(signed: true)
        try log.appendExpenses(1, writer: newcomer)
        newcomer.close()
        writer.close()
        let reopened = try log.openWriter(signed: true)
        #expect(reopened.head.lastIndex == 1, "the new log's own")
        try log.appendExpenses(1, writer: reopened)
        reopened.close()
        #expect(try LogVerifier.verify(directory: log.directory.path).findings.isEmpty)
    }

    /// A byte flipped in place after the close — same size, and within the file system's
    /// timestamp granularity — is not trusted past: the open recovers the log and finds it.
    @Test func aSegmentChangedSinceTheCloseIsRecoveredNotTrusted() throws {
        let log = TestLog()
        let writer = try log.openWriter(signed: true)
        try log.appendExpenses(20, writer: writer)
        writer.close()
        let path = try log.segmentPaths()[0]
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[bytes.count / 2] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(throws: LogError.self) { _ = try log.openWriter(signed: true) }

        // A torn write after the close: cut as ever, not taken from the record.
        let torn = TestLog()
        let tornWriter = try torn.openWriter(signed: true)
        try torn.appendExpenses(5, writer: tornWriter)
        tornWriter.close()
        let handle = FileHandle(forWritingAtPath: try torn.segmentPaths()[0])!
        handle.seekToEndOfFile()
        handle.write(Data([0x54, 0x4C, 0x59]))
        try handle.close()
        let reopened = try torn.openWriter(signed: true)
        #expect(!reopened.recovery.fromCleanClose)
        #expect(reopened.recovery.tornTail != nil)
        #expect(reopened.head.lastIndex == 5)
    }

    /// A record an earlier close left, put back after later appends (its removal lost in a
    /// power cut), describes a shorter log: ignored.
    @Test func aStaleRecordIsIgnored() throws {
        let log = TestLog()
        let writer = try log.openWriter(signed: true)
        try log.appendExpenses(5, writer: writer)
        writer.close()
        let stale = try Data(contentsOf: URL(fileURLWithPath: record(log)))
        let second = try log.openWriter(signed: true)
        try log.appendExpenses(5, writer: second)
        second.close()
        try stale.write(to: URL(fileURLWithPath: record(log)))
        let reopened = try log.openWriter(signed: true)
        #expect(!reopened.recovery.fromCleanClose)
        #expect(reopened.head.lastIndex == 10)
        #expect(!FileManager.default.fileExists(atPath: record(log)), "removed all the same")
    }

    @Test func aDamagedRecordIsIgnored() throws {
        let log = TestLog()
        let writer = try log.openWriter(signed: true)
        try log.appendExpenses(5, writer: writer)
        writer.close()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: record(log)))
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: record(log)))
        let reopened = try log.openWriter(signed: true)
        #expect(!reopened.recovery.fromCleanClose)
        #expect(reopened.head.lastIndex == 5)
    }

    /// Whatever bytes a record file holds — a real one cut short, flipped, or noise — decoding
    /// throws or gives a record; it never traps.
    @Test func anyBytesDecodeOrThrow() async throws {
        let log = TestLog()
        let writer = try log.openWriter(signed: true)
        try log.appendExpenses(3, writer: writer)
        writer.close()
        let valid = Array(try Data(contentsOf: URL(fileURLWithPath: record(log))))
        #expect(try CleanClose.decode(valid).head.lastIndex == 3)
        for cut in 0..<valid.count { #expect(throws: DecodingError.self) { _ = try CleanClose.decode(Array(valid.prefix(cut))) } }
        await propertyCheck(count: 500, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var random = SplitMix64(seed: seed)
            var bytes = valid
            for _ in 0..<(1 + random.next() % 4) { bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next()) }
            _ = try? CleanClose.decode(bytes)
            let noise = (0..<Int(random.next() % 300)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            _ = try? CleanClose.decode(Array("TLCC".utf8) + noise)
        }
    }
}
