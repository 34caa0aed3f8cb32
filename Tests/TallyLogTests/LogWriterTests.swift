import Foundation
import Testing
@testable import TallyLog
import TallyCore
import TallyTestSupport

@Suite struct LogWriterTests {
    @Test func bulkAppendRollsSegmentsAndReadsBackLikeSingleAppends() throws {
        var log = TestLog()
        log.segmentSize = 64 << 10
        let writer = try log.openWriter()
        let before = try writer.append([SampleEvents.expenseCreate(memo: "before")])
        var drafts: [EventDraft] = []
        for index in 0..<30_000 { drafts.append(SampleEvents.expenseCreate(amount: Int64(index + 1), memo: "bulk \(index % 50)")) }
        drafts.append(SampleEvents.everyKind().last!)
        let receipt = try writer.appendBulk(drafts)
        let after = try writer.append([SampleEvents.expenseCreate(memo: "after")])
        writer.close()
        #expect(receipt.count == drafts.count && receipt.lastIndex == UInt64(drafts.count + 1))
        let read = try log.events()
        #expect(read.count == drafts.count + 2)
        #expect(read.first?.event == before[0] && read.last?.event == after[0])
        #expect(zip(read.dropFirst().dropLast(), drafts).allSatisfy { $0.event.properties == $1.properties && $0.event.entityID == $1.entityID })
        #expect(try log.segmentPaths().count > 5, "the bulk append rolled segments")
        #expect(try LogVerifier.verify(directory: log.directory.path).findings.isEmpty)
        let reopened = try log.openWriter()
        #expect(reopened.head.lastIndex == UInt64(drafts.count + 2))
    }

    @Test func rejectedBulkAppendWritesNothingAndTheWriterGoesOn() throws {
        let log = TestLog()
        let writer = try log.openWriter()
        try writer.append([SampleEvents.expenseCreate()])
        let segmentBytes = try log.segmentPaths().map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        var drafts = (0..<20_000).map { SampleEvents.expenseCreate(amount: Int64($0 + 1)) }
        drafts[15_000].actor = String(repeating: "x", count: Limits.maxActorBytes + 1)
        #expect(throws: LogError.self) { try writer.appendBulk(drafts) }
        #expect(try log.segmentPaths().map { try Data(contentsOf: URL(fileURLWithPath: $0)) } == segmentBytes, "nothing written")
        let next = try writer.append([SampleEvents.expenseCreate()])
        #expect(next[0].sequence == 2, "the rejected drafts took no sequence numbers")
        writer.close()
        #expect(try log.events().count == 2)
        #expect(try LogVerifier.verify(directory: log.directory.path).findings.isEmpty)
    }

    @Test func concurrentAppendsDuringABulkAppendStayInChainOrder() async throws {
        let log = TestLog()
        let writer = try log.openWriter()
        let drafts = (0..<50_000).map { SampleEvents.expenseCreate(amount: Int64($0 + 1)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { _ = try writer.appendBulk(drafts) }
            for _ in 0..<8 {
                group.addTask { for _ in 0..<20 { try writer.append([SampleEvents.expenseCreate()]) } }
            }
            try await group.waitForAll()
        }
        writer.close()
        #expect(try log.events().count == 50_000 + 160)
        #expect(try LogVerifier.verify(directory: log.directory.path).findings.isEmpty)
    }

    @Test func appendsAreReadBackInOrderWithChainedHashes() throws {
        let log = TestLog()
        let writer = try log.openWriter()
        let written = try log.appendExpenses(20, writer: writer)
        let read = try log.events()
        #expect(read.map(\.event) == written)
        #expect(read.map(\.index) == Array(1...20))
        #expect(written.map(\.sequence) == Array(1...20))
        #expect(written[0].previousHash == .zero)
        for position in 1..<read.count { #expect(read[position].event.previousHash == read[position - 1].hash) }
        #expect(zip(written, written.dropFirst()).allSatisfy { $0.timestamp < $1.timestamp }, "clock stamps increase")
    }

    @Test func reopeningContinuesEveryChain() throws {
        let log = TestLog()
        do {
            let writer = try log.openWriter()
            try log.appendExpenses(3, writer: writer)
            try writer.append(SampleEvents.everyKind())
            writer.close()
        }
        let writer = try log.openWriter()
        let next = try writer.append([SampleEvents.expenseCreate(), SampleEvents.everyKind()[12]])
        #expect(next[0].sequence == 17)
        #expect(next[1].origin == log.localOnlyOrigin && next[1].sequence == 2, "local-only events have their own chain")
        #expect(try LogVerifier.verify(directory: log.directory.path).findings.isEmpty)
    }

    @Test func segmentsRollSealAndBecomeReadOnly() throws {
        var log = TestLog()
        log.segmentSize = 4 << 10
        let writer = try log.openWriter()
        try log.appendExpenses(300, writer: writer)
        let paths = try log.segmentPaths()
        #expect(paths.count > 3)
        for path in paths.dropLast() {
            let scan = try SegmentScanner.scan(path: path, isLast: false) { _ in }
            #expect(scan.seal != nil)
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as! Int
            #expect(mode & 0o222 == 0, "sealed segment \(path) is read-only")
        }
        writer.close()
        let reopened = try log.openWriter()
        #expect(reopened.head.lastIndex == 300)
        #expect(try log.events().count == 300)
        #expect(try LogVerifier.verify(directory: log.directory.path).findings.isEmpty)
    }

    @Test func concurrentAppendsShareFsyncsAndLoseNothing() async throws {
        let log = TestLog()
        let writer = try log.openWriter()
        let acknowledged = try await withThrowingTaskGroup(of: [Event].self) { group in
            for _ in 0..<16 {
                group.addTask { try (0..<25).flatMap { _ in try writer.append([SampleEvents.expenseCreate()]) } }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(acknowledged.count == 400)
        #expect(Set(acknowledged.map(\.sequence)) == Set(1...400))
        let read = try log.events()
        #expect(Set(read.map(\.event.entityID)) == Set(acknowledged.map(\.entityID)))
        #expect(try LogVerifier.verify(directory: log.directory.path).findings.isEmpty)
    }

    @Test func aBulkAppendSplitsIntoFramesAndCompresses() throws {
        let log = TestLog()
        let writer = try log.openWriter()
        try writer.append((0..<20_000).map { SampleEvents.expenseCreate(amount: Int64($0 + 1)) })
        let stats = try LogReader(directory: log.directory.path).statistics()
        #expect(stats.events == 20_000)
        #expect(stats.compressionRatio > 2, "ratio \(stats.compressionRatio)")
    }

    @Test func aSecondWriterIsRefusedOrWaitsForTheLock() throws {
        let log = TestLog()
        let first = try log.openWriter()
        try log.appendExpenses(1, writer: first)
        #expect {
            _ = try log.openWriter(lockTimeout: 0.2)
        } throws: { error in
            guard case LogError.writerLocked = error else { return false }
            return "\(error)".contains("another process is writing")
        }
        let closer = Thread {
            Thread.sleep(forTimeInterval: 0.3)
            first.close()
        }
        closer.start()
        let second = try log.openWriter(lockTimeout: 10)
        let next = try second.append([SampleEvents.expenseCreate()])
        #expect(next[0].sequence == 2)
    }

    @Test func readersWorkBesideAWriter() throws {
        let log = TestLog()
        let writer = try log.openWriter()
        try log.appendExpenses(5, writer: writer)
        #expect(try log.events().count == 5)
        try log.appendExpenses(5, writer: writer)
        #expect(try log.events().count == 10)
        #expect(try LogReader(directory: log.directory.path).statistics().events == 10)
    }

    @Test func aFailedWriteStopsTheWriterForGood() throws {
        let log = TestLog()
        let writer = try log.openWriter()
        try log.appendExpenses(2, writer: writer)
        writer.segment.fillDiskForTesting()
        #expect {
            try writer.append([SampleEvents.expenseCreate()])
        } throws: { error in
            guard case LogError.writerStopped = error else { return false }
            return true
        }
        #expect(throws: LogError.self) { try writer.append([SampleEvents.expenseCreate()]) }
        #expect(try log.events().count == 2)
    }

    /// An event larger than the 1 MiB frame target (a 1 MiB setting value) gets a frame of its
    /// own, and the log still reopens and reads it back.
    @Test func anEventLargerThanTheFrameTargetReopens() throws {
        let log = TestLog()
        let writer = try log.openWriter()
        let value = "\"" + String(repeating: "x", count: (1 << 20) - 16) + "\""
        try writer.append([EventDraft(entityType: .setting, entityID: .settingKey("big"), operation: .create, properties: [.value: .json(value)], actor: "t")])
        writer.close()
        let reopened = try log.openWriter()
        #expect(reopened.head.lastIndex == 1)
        #expect(try log.events().first?.event.properties[.value] == .json(value))
    }
}
