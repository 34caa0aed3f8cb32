import Foundation
import GRDB
import Testing
@testable import TallyStore
import TallyCore
import TallyLog
import TallyTestSupport

/// Generations of the views: a large first load writes a new one and points the link at it,
/// and every projector already open follows the link to it (as it does after a rebuild).
@Suite struct GenerationTests {
    func replicaWithExpenses(_ count: Int) throws -> TestReplica {
        let replica = try TestReplica()
        let writer = try replica.data.openWriter()
        try writer.append((0..<count).map { SampleEvents.expenseCreate(amount: Int64($0 + 1)) })
        writer.close()
        return replica
    }

    func generationFiles(_ replica: TestReplica) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: replica.data.path).filter {
            $0.hasPrefix("projections-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
        }.sorted()
    }

    @Test func aLargeFirstLoadWritesANewGenerationThatOpenProjectorsFollow() throws {
        let replica = try replicaWithExpenses(40)
        let openBefore = try Projector(directory: replica.data)
        #expect(try openBefore.checkpoint() == 0)
        var loader = try Projector(directory: replica.data)
        loader.freshGenerationFrom = 10
        #expect(try loader.catchUp() == 40)
        #expect(ProjectionDatabase.currentGeneration(replica.data) == 2)
        #expect(try generationFiles(replica) == ["projections-000002.sqlite"], "the empty first generation is removed")
        // The projector opened before the swap now reads (and would write) the new generation.
        #expect(try openBefore.checkpoint() == 40)
        #expect(try openBefore.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM expenses") } == 40)
        // Byte for byte what loading in place gives.
        let inPlace = try replicaWithExpenses(0)
        let writer = try inPlace.data.openWriter()
        var events: [(bytes: [UInt8], event: Event)] = []
        try replica.data.reader.forEachEvent { events.append((EventCodec.encode($0.event), $0.event)) }
        _ = try writer.appendEncoded(events)
        writer.close()
        let inPlaceProjector = try Projector(directory: inPlace.data)
        #expect(try inPlaceProjector.catchUp() == 40)
        #expect(ProjectionDatabase.currentGeneration(inPlace.data) == 1, "below freshGenerationFrom: in place")
        #expect(try inPlaceProjector.database.read { try ViewChecksum.compute($0) } == loader.database.read { try ViewChecksum.compute($0) })
    }

    @Test func aProjectorOpenBeforeARebuildProjectsIntoTheNewGeneration() throws {
        let replica = try replicaWithExpenses(5)
        let server = try Projector(directory: replica.data)  // a long-running process's projector
        try server.catchUp()
        _ = try ProjectionRebuilder.rebuild(replica.data, verifyOnly: false)
        let writer = try replica.data.openWriter()
        try writer.append([SampleEvents.expenseCreate()])
        writer.close()
        #expect(try server.catchUp() == 1)
        // A reader opened afresh through the link sees what that projector wrote.
        let fresh = try DatabaseQueue(path: ProjectionDatabase.linkPath(replica.data))
        #expect(try fresh.read { try Int.fetchOne($0, sql: "SELECT last_index FROM projection_checkpoint") } == 6)
        #expect(try fresh.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM expenses") } == 6)
    }

    @Test func aFirstLoadWhileAnotherProcessWritesAGenerationLoadsInPlace() throws {
        let replica = try replicaWithExpenses(30)
        let other = try #require(try ProjectionDatabase.lockGenerations(replica.data), "no one holds it yet")
        defer { other.release() }
        #expect(try ProjectionDatabase.lockGenerations(replica.data) == nil, "held")
        var loader = try Projector(directory: replica.data)
        loader.freshGenerationFrom = 10
        #expect(try loader.catchUp() == 30)
        #expect(ProjectionDatabase.currentGeneration(replica.data) == 1)
        #expect(try generationFiles(replica) == ["projections-000001.sqlite"])
    }

    @Test func aStrayGenerationLeftByAKilledFirstLoadIsReplaced() throws {
        let replica = try replicaWithExpenses(25)
        _ = try Projector(directory: replica.data)
        try Data("what a kill leaves: no journal, so any bytes".utf8).write(to: URL(fileURLWithPath: replica.data.path + "/projections-000002.sqlite"))
        var loader = try Projector(directory: replica.data)
        loader.freshGenerationFrom = 10
        #expect(try loader.catchUp() == 25)
        #expect(ProjectionDatabase.currentGeneration(replica.data) == 2)
        #expect(try loader.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM expenses") } == 25)
    }
}
