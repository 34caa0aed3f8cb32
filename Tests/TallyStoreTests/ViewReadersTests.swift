import Foundation
import GRDB
import Synchronization
import Testing
import TallyCore
import TallyLog
@testable import TallyStore
import TallyTestSupport

/// `Projector.readDirectly`: reads on read-only connections of their own (`ViewReaders`)
/// instead of GRDB's reader pool.
@Suite struct ViewReadersTests {
    @Test func eachWriterReadsItsOwnProjectedWriteAtOnceWhileOthersWriteAndRead() throws {
        let fixture = try ProjectionGroupCommitTests.Fixture()
        let (writer, projector, group) = (fixture.writer, fixture.projector, fixture.group)
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for step in 0..<40 {
                do {
                    let logged = try writer.appendLogged([SampleEvents.expenseCreate(amount: Int64(thread * 1_000 + step + 1))])
                    try group.project(logged)
                    let id = logged[0].event.entityID
                    let found = try projector.readDirectly { try ProjectionLookup($0).entity(id) }
                    if found == nil { failures.withLock { $0.append("thread \(thread) step \(step): own write not found") } }
                } catch {
                    failures.withLock { $0.append("thread \(thread) step \(step): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(try projector.readDirectly { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM expenses") } == 320)
    }

    @Test func directReadsMoveToASwappedInGenerationOnceTheProjectorFollowsIt() throws {
        let fixture = try ProjectionGroupCommitTests.Fixture()
        let (replica, writer, projector, group) = (fixture.replica, fixture.writer, fixture.projector, fixture.group)
        let first = try writer.appendLogged((0..<5).map { SampleEvents.expenseCreate(amount: Int64($0 + 1)) })
        try group.project(first)
        let file = { try projector.readDirectly { try String.fetchOne($0, sql: "SELECT file FROM pragma_database_list WHERE name = 'main'") } }
        #expect(try file()?.hasSuffix(ProjectionDatabase.generationName(1)) == true)
        // The next generation, as of index 5, swapped in after five more writes.
        var folded = FoldedLog()
        for logged in first { folded.apply(logged.event) }
        let next = try ProjectionDatabase.writeNextGeneration(replica.data) { queue, path in
            try ProjectionRebuilder.fillNewGeneration(queue, at: path, from: folded.intoState(), lastIndex: 5)
        }
        try group.project(try writer.appendLogged((0..<5).map { SampleEvents.expenseCreate(amount: Int64($0 + 100)) }))
        try ProjectionDatabase.makeCurrent(replica.data, next.number)
        // Until the projector looks at the link, reads stay on the generation they were on
        // (whose files are gone from the folder but open): still all ten writes.
        #expect(try projector.readDirectly { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM expenses") } == 10)
        #expect(try projector.checkpoint() == 10)  // follows the link, catching the new views up
        #expect(try file()?.hasSuffix(ProjectionDatabase.generationName(next.number)) == true)
        #expect(try projector.readDirectly { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM expenses") } == 10)
    }

    @Test func readsThatNeedANewConnectionAfterASwapFollowTheLinkInsteadOfFailing() throws {
        let fixture = try ProjectionGroupCommitTests.Fixture()
        let (replica, writer, projector, group) = (fixture.replica, fixture.writer, fixture.projector, fixture.group)
        try group.project(try writer.appendLogged((0..<5).map { SampleEvents.expenseCreate(amount: Int64($0 + 1)) }))
        #expect(try projector.readDirectly { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM expenses") } == 5)
        // A rebuild (another process) swaps in the next generation and removes this one's file;
        // this process writes nothing after it, so nothing else makes it follow the link.
        _ = try ProjectionRebuilder.rebuild(replica.data, verifyOnly: false)
        #expect(ProjectionDatabase.currentGeneration(replica.data) == 2)
        // Eight reads at once, on threads of their own, need connections the one idle
        // connection cannot give.
        let results = Mutex<[String]>([])
        let done = DispatchGroup()
        for _ in 0..<8 {
            done.enter()
            Thread.detachNewThread {
                let answer = Result { try projector.readDirectly { db in
                    usleep(50_000)
                    return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM expenses") ?? -1
                } }
                results.withLock { $0.append("\(answer.map { "\($0)" })") }
                done.leave()
            }
        }
        done.wait()
        #expect(results.withLock { $0 } == Array(repeating: "success(\"5\")", count: 8))
        let file = try projector.readDirectly { try String.fetchOne($0, sql: "SELECT file FROM pragma_database_list WHERE name = 'main'") }
        #expect(file?.hasSuffix(ProjectionDatabase.generationName(2)) == true)
    }

    @Test func directReadsCannotWrite() throws {
        let fixture = try ProjectionGroupCommitTests.Fixture()
        #expect(throws: DatabaseError.self) {
            try fixture.projector.readDirectly { try $0.execute(sql: "DELETE FROM expenses") }
        }
    }
}

/// `ExpenseFilter.walksOneIndexInOrder`: the pages the server answers on the request's own task
/// really are read off one index in date order, with no sort and no scan of the table.
@Suite struct IndexWalkTests {
    @Test func pagesSaidToWalkOneIndexAreReadOffAnIndexInOrder() throws {
        let replica = try TestReplica()
        let projector = try Projector(directory: replica.data)
        var filters: [ExpenseFilter] = []
        for month in [nil, "2026-03"] {
            for range in [false, true] {
                for cursor in [false, true] {
                    var filter = ExpenseFilter()
                    filter.month = month
                    if range { (filter.from, filter.to) = (DateTime(epochMillis: 1_772_323_200_000, offsetMinutes: 0), DateTime(epochMillis: 1_775_000_000_000, offsetMinutes: 0)) }
                    if cursor { filter.after = (1_772_400_000_000, "8b1a9953-c461-4b3e-9f5c-1d6a3b1e2f00") }
                    filter.limit = 1_000
                    filters.append(filter)
                }
            }
        }
        for filter in filters {
            #expect(filter.walksOneIndexInOrder)
            let plan = try projector.database.read { db -> [String] in
                let (statement, arguments) = try ProjectionQueries.expensesStatement(db, filter)
                return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: arguments).map { $0["detail"] as String }
            }
            let expenses = plan.filter { $0.contains(" e ") || $0.hasSuffix(" e") }
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(filter.month ?? "-") \(filter.from != nil) \(filter.after != nil): \(plan)")
            #expect(expenses.count == 1 && expenses.allSatisfy { $0.contains("USING INDEX") || $0.contains("USING COVERING INDEX") }, "\(plan)")
        }
        var text = ExpenseFilter()
        text.text = "bakery"
        #expect(!text.walksOneIndexInOrder)
    }
}
