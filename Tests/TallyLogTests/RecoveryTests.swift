import Foundation
import Testing
@testable import TallyLog
import TallyCore
import TallyTestSupport

@Suite struct RecoveryTests {
    /// Cuts the newest segment at every byte offset inside its final frame: each time the log
    /// must reopen with exactly the events before that frame, and accept appends again.
    @Test func aTornTailIsCutAtEveryOffsetOfTheFinalFrame() throws {
        let log = TestLog()
        let writer = try log.openWriter()
        try log.appendExpenses(5, writer: writer)
        let finalFrameStart = try FileManager.default.attributesOfItem(atPath: try log.segmentPaths()[0])[.size] as! Int
        try writer.append([SampleEvents.expenseCreate(), SampleEvents.expenseCreate()])  // the final frame
        writer.close()
        let path = try log.segmentPaths()[0]
        let intact = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(intact.count > finalFrameStart + SegmentFormat.frameHeaderSize)
        for cut in finalFrameStart..<intact.count {
            try intact.prefix(cut).write(to: URL(fileURLWithPath: path))
            let reopened = try log.openWriter()
            #expect(reopened.head.lastIndex == 5, "cut at \(cut)")
            #expect((reopened.recovery.tornTail != nil) == (cut > finalFrameStart), "cut at \(cut)")
            #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int == finalFrameStart)
            let appended = try reopened.append([SampleEvents.expenseCreate()])
            #expect(appended[0].sequence == 6)
            reopened.close()
            #expect(try log.events().count == 6)
        }
    }

    @Test func aZeroFilledTailIsTreatedAsTorn() throws {
        let log = TestLog()
        let writer = try log.openWriter()
        try log.appendExpenses(3, writer: writer)
        writer.close()
        let handle = FileHandle(forWritingAtPath: try log.segmentPaths()[0])!
        handle.seekToEndOfFile()
        handle.write(Data(count: 4096))
        try handle.close()
        let reopened = try log.openWriter()
        #expect(reopened.head.lastIndex == 3)
        #expect(reopened.recovery.tornTail?.contains("zero-filled") == true)
    }

    /// A flipped byte anywhere before the final frame is corruption, not a torn tail: opening
    /// refuses, naming the segment and the frame's offset, and changes nothing.
    @Test func aFlippedByteInTheMiddleRefusesToOpen() throws {
        let log = TestLog()
        let writer = try log.openWriter()
        try log.appendExpenses(10, writer: writer)
        writer.close()
        let path = try log.segmentPaths()[0]
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let middle = bytes.count / 2
        bytes[middle] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try log.openWriter()
        } throws: { error in
            guard case LogError.corrupt(let segment, let offset, _) = error else { return false }
            return segment == (path as NSString).lastPathComponent && offset <= middle && offset > 0
                && "\(error)".contains("tally log repair")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes, "refusing changed nothing")
        #expect(throws: LogError.self) { try log.events() }
    }

    @Test func everySingleByteFlipBeforeTheFinalFrameIsCaught() throws {
        let log = TestLog()
        let writer = try log.openWriter()
        try log.appendExpenses(3, writer: writer)
        let finalFrameStart = try FileManager.default.attributesOfItem(atPath: try log.segmentPaths()[0])[.size] as! Int
        try log.appendExpenses(1, writer: writer)
        writer.close()
        let path = try log.segmentPaths()[0]
        let intact = try Data(contentsOf: URL(fileURLWithPath: path))
        for position in 0..<finalFrameStart {
            var damaged = intact
            damaged[position] ^= 0x01
            try damaged.write(to: URL(fileURLWithPath: path))
            #expect(throws: LogError.self, "flip at \(position)") { try LogRecovery.recover(directory: log.directory.path, cutTornTail: false) }
        }
    }

    @Test func repairCutsAtTheDamageAndMovesTheRestAside() throws {
        var log = TestLog()
        log.segmentSize = 2 << 10
        let writer = try log.openWriter()
        try log.appendExpenses(60, writer: writer)
        writer.close()
        let paths = try log.segmentPaths()
        #expect(paths.count >= 3)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: paths[1]))
        bytes[bytes.count / 2] ^= 0xFF
        chmod(paths[1], 0o644)
        try bytes.write(to: URL(fileURLWithPath: paths[1]))
        #expect(throws: LogError.self) { try log.openWriter() }

        let report = try LogRepair.repair(directory: log.directory.path)
        #expect(report.cutSegment == (paths[1] as NSString).lastPathComponent)
        #expect(report.movedAside.count == paths.count - 1)
        let kept = report.lastIndexKept
        #expect(kept > 0 && kept < 60)
        let reopened = try log.openWriter()
        #expect(reopened.head.lastIndex == kept)
        try log.appendExpenses(1, writer: reopened)
        #expect(try LogVerifier.verify(directory: log.directory.path).findings.isEmpty)
        let aside = try FileManager.default.contentsOfDirectory(atPath: report.asideDirectory!)
        #expect(aside.count == report.movedAside.count)
    }
}
