import Foundation
import GRDB
import Testing
@testable import TallyStore
import TallyCore
import TallyLog
import TallyTestSupport

/// Concurrent writers sharing projection transactions (`ProjectionGroupCommit`): each returns
/// only once the views show its events, every event is applied exactly once, and the views
/// equal a rebuild from the log.
@Suite struct ProjectionGroupCommitTests {
    @Test func concurrentWritersEachSeeTheirEventsAndTheViewsEqualARebuild() throws {
        let fixture = try Fixture()
        let (replica, writer, projector, group) = (fixture.replica, fixture.writer, fixture.projector, fixture.group)
        let failures = Mutex<[String]>([])
        let threads = 24, writesEach = 15
        let done = DispatchGroup()
        for thread in 0..<threads {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                let id = UUID()
                for step in 0..<writesEach {
                    do {
                        // A create, then edits of it; some writes carry two events.
                        var drafts = [step == 0 ? SampleEvents.expenseCreate(id: id, amount: 1) : SampleEvents.expenseUpdate(id: id, amount: Int64(step + 1))]
                        if step % 4 == 3 { drafts.append(SampleEvents.expenseUpdate(id: id, amount: Int64(1_000 + step))) }
                        let logged = try writer.appendLogged(drafts)
                        try group.project(logged)
                        let seen = try projector.database.read { db in
                            (
                                try Projector.checkpoint(db),
                                try Int64.fetchOne(db, sql: "SELECT amount FROM expenses WHERE id = ?", arguments: [id.uuidString.lowercased()])
                            )
                        }
                        let expected = drafts.count == 2 ? Int64(1_000 + step) : Int64(step + 1)
                        // Only this thread writes this expense: the views show exactly its last write.
                        if seen.0 < logged.last!.index || seen.1 != expected {
                            failures.withLock {
                                $0.append(
                                    "thread \(thread) step \(step): views at \(seen.0), event \(logged.last!.index), amount \(String(describing: seen.1))")
                            }
                        }
                    } catch {
                        failures.withLock { $0.append("thread \(thread): \(error)") }
                    }
                }
            }
        }
        done.wait()
        #expect(failures.withLock { $0 } == [])
        let total = threads * writesEach + threads * (writesEach / 4)
        #expect(try projector.checkpoint() == UInt64(total))
        // Each thread's expense ends at its own last amount (its writes are sequential).
        let amounts = try projector.database.read { try Int64.fetchAll($0, sql: "SELECT amount FROM expenses") }
        #expect(amounts.count == threads && amounts.allSatisfy { $0 == Int64(writesEach) })
        try expectViewsEqualARebuild(replica, projector)
    }

    /// Events appended without being handed over (a peer's, a bulk load's) leave a gap before
    /// the next handed-over one: the writer waiting behind it reads them from the log.
    @Test func aGapIsFilledFromTheLog() throws {
        let fixture = try Fixture()
        let (replica, writer, projector, group) = (fixture.replica, fixture.writer, fixture.projector, fixture.group)
        try group.project(try writer.appendLogged([SampleEvents.expenseCreate(amount: 1)]))
        _ = try writer.appendLogged((0..<50).map { SampleEvents.expenseCreate(amount: Int64($0 + 10)) })  // not handed over
        let began = Date()
        try group.project(try writer.appendLogged([SampleEvents.expenseCreate(amount: 2)]))
        #expect(try projector.checkpoint() == 52)
        #expect(Date().timeIntervalSince(began) < 5)
        #expect(try projector.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM expenses") } == 52)
        // Someone else caught the views up past what was handed over: nothing is applied twice.
        let later = try writer.appendLogged([SampleEvents.expenseCreate(amount: 3)])
        try projector.catchUp()
        try group.project(later)
        #expect(try projector.checkpoint() == 53)
        try expectViewsEqualARebuild(replica, projector)
    }

    /// A rebuild may swap in views behind what the writers remember (its catch-up ended before
    /// their last writes). The next write projects into the new views all the same (its apply
    /// finds the checkpoint elsewhere and catches up from the log), and a writer whose events
    /// the new views lack waits until they show them.
    @Test func viewsSwappedForOnesBehindAreCaughtUpBeforeUse() throws {
        let fixture = try Fixture()
        let (replica, writer, projector, group) = (fixture.replica, fixture.writer, fixture.projector, fixture.group)
        let first = try writer.appendLogged((0..<5).map { SampleEvents.expenseCreate(amount: Int64($0 + 1)) })
        try group.project(first)
        // A generation of the views as of index 5, made current only later.
        var folded = FoldedLog()
        for logged in first { folded.apply(logged.event) }
        let behind = try ProjectionDatabase.writeNextGeneration(replica.data) { queue, path in
            try ProjectionRebuilder.fillNewGeneration(queue, at: path, from: folded.intoState(), lastIndex: 5)
        }
        let second = try writer.appendLogged((0..<5).map { SampleEvents.expenseCreate(amount: Int64($0 + 100)) })
        try group.project(second)
        #expect(try projector.checkpoint() == 10)
        try ProjectionDatabase.makeCurrent(replica.data, behind.number)
        // The swapped-in views, behind, are caught up before they are used: a read right after
        // the swap still finds events 6–10 (acknowledged before it).
        #expect(try projector.checkpoint() == 10)
        #expect(try projector.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM expenses") } == 10)
        // The writer of events 6–10, asking again, finds them shown.
        try group.project(second)
        #expect(try projector.checkpoint() == 10)
        // A later write lands in the new views, with everything before it.
        let later = try writer.appendLogged([SampleEvents.expenseCreate(amount: 7)])
        try group.project(later)
        #expect(try projector.checkpoint() == 11)
        #expect(try projector.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM expenses") } == 11)
        try expectViewsEqualARebuild(replica, projector)
    }

    /// A replica with its writer open, its views, and a group commit over them.
    final class Fixture {
        let replica: TestReplica
        let writer: LogWriter
        let projector: Projector
        let group: ProjectionGroupCommit

        init() throws {
            replica = try TestReplica()
            writer = try replica.data.openWriter()
            projector = try Projector(directory: replica.data)
            group = ProjectionGroupCommit(projector: projector)
        }

        deinit { writer.close() }
    }

    func expectViewsEqualARebuild(_ replica: TestReplica, _ projector: Projector) throws {
        var events: [LoggedEvent] = []
        try replica.data.reader.forEachEvent { events.append($0) }
        let live = try projector.database.read { try ViewChecksum.compute($0) }
        let fresh = try rebuilt(events).read { try ViewChecksum.compute($0) }
        #expect(live.differences(from: fresh) == [])
    }
}

import Synchronization
