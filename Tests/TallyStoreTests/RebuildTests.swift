import Foundation
import GRDB
import Synchronization
import Testing
@testable import TallyStore
import TallyCore
import TallyLog
import TallyTestSupport

@Suite struct RebuildTests {
    func replicaWithEvents(_ count: Int) throws -> TestReplica {
        let replica = try TestReplica()
        let writer = try replica.data.openWriter()
        var drafts: [EventDraft] = []
        for step in 0..<count {
            drafts.append(
                step % 3 == 0 || drafts.isEmpty
                    ? SampleEvents.expenseCreate(amount: Int64(step + 1))
                    : SampleEvents.expenseUpdate(
                        id: {
                            if case .uuid(let id) = drafts.last!.entityID { return id }; return UUID()
                        }(), amount: Int64(step)))
        }
        try writer.append(drafts)
        writer.close()
        return replica
    }

    @Test func aRebuildOfAnUnchangedLogMatchesAndSwaps() throws {
        let replica = try replicaWithEvents(300)
        let projector = try Projector(directory: replica.data)
        try projector.catchUp()
        let before = try projector.database.read { try ViewChecksum.compute($0) }
        // A reader that holds the old generation open keeps reading it through the swap.
        let oldReader = try DatabaseQueue(path: ProjectionDatabase.linkPath(replica.data))
        let report = try ProjectionRebuilder.rebuild(replica.data, verifyOnly: false)
        #expect(report.differences.isEmpty)
        #expect(report.swapped && report.generation == 2)
        #expect(try oldReader.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM expenses") } == 100)
        let after = try Projector(directory: replica.data).database.read { try ViewChecksum.compute($0) }
        #expect(after == before, "byte-for-byte the same view contents")
        #expect(FileManager.default.fileExists(atPath: replica.data.path + "/projections-000002.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: replica.data.path + "/projections-000001.sqlite"))
    }

    @Test func verifyOnlyNamesWhatDriftedAndChangesNothing() throws {
        let replica = try replicaWithEvents(30)
        let projector = try Projector(directory: replica.data)
        try projector.catchUp()
        let victim = try projector.database.write { db -> String in
            let id = try String.fetchOne(db, sql: "SELECT id FROM expenses ORDER BY id LIMIT 1")!
            try db.execute(sql: "UPDATE expenses SET amount = amount + 1 WHERE id = ?", arguments: [id])
            return id
        }
        let report = try ProjectionRebuilder.rebuild(replica.data, verifyOnly: true)
        // The row, and the month's total its trigger moved with it.
        #expect(report.differences.count == 2)
        #expect(report.differences.first?.contains("expenses") == true && report.differences.first?.contains(victim) == true)
        #expect(report.differences.last?.hasPrefix("month_totals") == true)
        #expect(!report.swapped && report.generation == 1)
        #expect(!FileManager.default.fileExists(atPath: replica.data.path + "/projections-000002.sqlite"))
        // Rebuilding for real repairs the drift.
        _ = try ProjectionRebuilder.rebuild(replica.data, verifyOnly: false)
        #expect(try ProjectionRebuilder.rebuild(replica.data, verifyOnly: true).differences.isEmpty)
    }

    /// A rebuild beside a writer projecting as it goes (the service) compares the two views at
    /// one log index: the writer's new rows are not reported as drift.
    @Test func writesDuringARebuildAreNotDrift() throws {
        let replica = try replicaWithEvents(3_000)
        let projector = try Projector(directory: replica.data)
        try projector.catchUp()
        let writer = try replica.data.openWriter()
        defer { writer.close() }
        let group = ProjectionGroupCommit(projector: projector)
        let stop = Mutex(false)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { done.signal() }
            for step in 0..<5_000 where !stop.withLock({ $0 }) {  // bounded, and stopped once the rebuilds end
                guard let logged = try? writer.appendLogged([SampleEvents.expenseCreate(amount: Int64(step + 1))]) else { return }
                try? group.project(logged)
            }
        }
        var reports: [RebuildReport] = []
        for _ in 0..<3 { reports.append(try ProjectionRebuilder.rebuild(replica.data, verifyOnly: true)) }
        stop.withLock { $0 = true }
        done.wait()
        #expect(reports.allSatisfy { $0.differences.isEmpty }, "\(reports.map(\.differences))")
    }

    @Test func aStrayHalfBuiltGenerationIsIgnoredAndReplaced() throws {
        let replica = try replicaWithEvents(20)
        try Projector(directory: replica.data).catchUp()
        // What a rebuild killed half-way leaves: a partial next-generation file.
        try Data("partial".utf8).write(to: URL(fileURLWithPath: replica.data.path + "/projections-000002.sqlite"))
        #expect(try Projector(directory: replica.data).database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM expenses") } == 7)
        let report = try ProjectionRebuilder.rebuild(replica.data, verifyOnly: false)
        #expect(report.differences.isEmpty && report.generation == 2)
    }

    @Test func eventsAppendedAfterAViewIsOpenedAreCaughtUp() throws {
        let replica = try replicaWithEvents(10)
        let projector = try Projector(directory: replica.data)
        #expect(try projector.catchUp() == 10)
        let writer = try replica.data.openWriter()
        try writer.append([SampleEvents.expenseCreate()])
        #expect(try projector.catchUp() == 1)
        #expect(try projector.checkpoint() == 11)
    }
}
