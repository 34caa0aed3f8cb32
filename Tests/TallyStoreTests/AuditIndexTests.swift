import Foundation
import GRDB
import Testing
import TallyCore
import TallyLog
import TallyStore
import TallyTestSupport

/// `GET /v1/audit/{id}` and `tally audit history` read the segments that hold the entity's
/// events, found in `audit-index.sqlite`, instead of the whole log per request.
@Suite struct AuditIndexTests {
    let folder = TemporaryDirectory("tally-audit-index")

    func fullScan(_ directory: DataDirectory, _ id: EntityID) throws -> [UInt64] {
        var indexes: [UInt64] = []
        try directory.reader.forEachEvent { if $0.event.entityID == id { indexes.append($0.index) } }
        return indexes
    }

    func indexedSegments(_ directory: DataDirectory, _ id: EntityID) throws -> [Int64] {
        try DatabaseQueue(path: directory.path + "/audit-index.sqlite").read {
            try Int64.fetchAll($0, sql: "SELECT segment FROM entity_segments WHERE entity = ? ORDER BY segment", arguments: [id.description])
        }
    }

    /// Several entities' histories at once (a summary by bill asks for every card's) are each
    /// the one a full scan finds, read in one pass over the segments that hold any of them.
    @Test func severalEntitiesHistoriesAreReadInOnePass() throws {
        let directory = try DataDirectory.create(path: folder.file("several"), name: "several")
        var configuration = LogConfiguration()
        configuration.segmentSizeLimit = 4_096
        let writer = try directory.openWriter(configuration: configuration)
        defer { writer.close() }
        let ids = (0..<5).map { _ in UUID() }
        for round in 0..<40 {
            try writer.append([SampleEvents.expenseCreate()])
            let id = ids[round % ids.count]
            try writer.append([
                round < ids.count
                    ? SampleEvents.expenseCreate(id: id)
                    : EventDraft(entityType: .expense, entityID: .uuid(id), operation: .update, properties: [.amount: .int(Int64(round))], actor: "t")
            ])
        }
        let asked = Set(ids.prefix(4).map { EntityID.uuid($0) } + [EntityID.uuid(UUID())])  // one with no history
        let histories = try AuditIndex(directory).events(of: asked)
        #expect(Set(histories.keys) == Set(ids.prefix(4).map { EntityID.uuid($0) }), "only those with a history, and only those asked")
        for id in asked { #expect((histories[id] ?? []).map(\.index) == (try fullScan(directory, id)), "\(id)") }
        #expect(try directory.reader.segmentNames().count > 3)
    }

    @Test func anAuditReadsOnlyTheSegmentsHoldingTheEntityAndIndexesNewEventsIncrementally() throws {
        let directory = try DataDirectory.create(path: folder.file("r"), name: "r")
        var configuration = LogConfiguration()
        configuration.segmentSizeLimit = 4_096  // many small segments
        let writer = try directory.openWriter(configuration: configuration)
        defer { writer.close() }
        let tracked = UUID()
        try writer.append([SampleEvents.expenseCreate(id: tracked)])
        for _ in 0..<300 { try writer.append([SampleEvents.expenseCreate()]) }
        try writer.append([EventDraft(entityType: .expense, entityID: .uuid(tracked), operation: .update, properties: [.amount: .int(5)], actor: "t")])
        let id = EntityID.uuid(tracked)
        let index = AuditIndex(directory)
        #expect(try index.events(of: id).map(\.index) == (try fullScan(directory, id)))
        #expect(try index.events(of: id).count == 2)
        let segments = try indexedSegments(directory, id)
        let segmentCount = try directory.reader.segmentNames().count
        #expect(segments.count == 2 && segmentCount > 10, "only the segments holding it, of many")
        // New events, of it and of others, are indexed by the next audit.
        for _ in 0..<100 { try writer.append([SampleEvents.expenseCreate()]) }
        try writer.append([EventDraft(entityType: .expense, entityID: .uuid(tracked), operation: .delete, actor: "t")])
        #expect(try index.events(of: id).map(\.index) == (try fullScan(directory, id)))
        #expect(try index.events(of: id).last?.event.operation == .delete)
        // A lost index is only a cost: it is rebuilt from the log.
        AuditIndex.remove(from: directory)
        #expect(try index.events(of: id).map(\.index) == (try fullScan(directory, id)))
        #expect(try index.events(of: .uuid(UUID())).isEmpty)
    }
}
