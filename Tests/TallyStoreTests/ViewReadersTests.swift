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
                let answer = Result {
                    try projector.readDirectly { db in
                        usleep(50_000)
                        return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM expenses") ?? -1
                    }
                }
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
