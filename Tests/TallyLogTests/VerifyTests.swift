import Foundation
import Testing
@testable import TallyLog
import TallyCore
import TallyTestSupport

/// `audit verify` against a tamperer who keeps every checksum valid: only the hash chains and
/// sequence numbers can tell.
@Suite struct VerifyTests {
    func tamperedLog(_ change: (inout [[UInt8]]) throws -> Void) throws -> (TestLog, VerificationReport) {
        let log = TestLog()
        let writer = try log.openWriter()
        try log.appendExpenses(8, writer: writer)
        writer.close()
        #expect(try LogVerifier.verify(directory: log.directory.path).findings.isEmpty)
        try SegmentRewriter.rewrite(try log.segmentPaths()[0], change)
        return (log, try LogVerifier.verify(directory: log.directory.path))
    }

    @Test func anEditedEventIsNamed() throws {
        let (log, report) = try tamperedLog { events in
            var event = try EventCodec.decode(events[3])
            event.properties[.amount] = .int(1_000_000)
            events[3] = EventCodec.encode(event)
        }
        let finding = try #require(report.findings.first)
        #expect(finding.event == "\(log.origin)#5")
        #expect(finding.problem.contains("#4 was edited"))
        #expect(finding.segment == "0000000000000001.tseg" && finding.offset > 0)
    }

    @Test func aDroppedEventIsNamed() throws {
        let (log, report) = try tamperedLog { events in events.remove(at: 2) }
        let finding = try #require(report.findings.first)
        #expect(finding.event == "\(log.origin)#4")
        #expect(finding.problem.contains("#3…#3") && finding.problem.contains("missing"))
    }

    @Test func reorderedEventsAreNamed() throws {
        let (log, report) = try tamperedLog { events in events.swapAt(4, 5) }
        let finding = try #require(report.findings.first)
        #expect(finding.event == "\(log.origin)#6")
        #expect(report.findings.contains { $0.problem.contains("reordered") })
    }

    @Test func aTruncatedEventIsNamed() throws {
        let log = TestLog()
        let writer = try log.openWriter()
        try log.appendExpenses(8, writer: writer)
        writer.close()
        let path = try log.segmentPaths()[0]
        // Cut bytes out of the middle of the third frame and keep the rest: a truncated event.
        let frames = try frameOffsets(path)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes.removeSubrange((frames[2] + 40)..<(frames[2] + 60))
        try bytes.write(to: URL(fileURLWithPath: path))
        let report = try LogVerifier.verify(directory: log.directory.path)
        let finding = try #require(report.findings.first)
        #expect(finding.offset == frames[2])
        #expect(finding.segment == "0000000000000001.tseg")
    }

    @Test func aTamperedSealedSegmentFailsItsSeal() throws {
        var log = TestLog()
        log.segmentSize = 2 << 10
        let writer = try log.openWriter()
        try log.appendExpenses(40, writer: writer)
        writer.close()
        // Rewrite the whole first (sealed) segment without its last event and without its seal.
        let path = try log.segmentPaths()[0]
        try SegmentRewriter.rewrite(path) { $0.removeLast() }
        let report = try LogVerifier.verify(directory: log.directory.path)
        #expect(!report.findings.isEmpty)
    }

    func frameOffsets(_ path: String) throws -> [Int] {
        var offsets: [Int] = []
        _ = try SegmentScanner.scan(path: path, isLast: true) { offsets.append($0.offset) }
        return offsets
    }
}
