import Foundation
import GRDB
import Testing
@testable import TallyStore
import TallyCore
import TallyLog
import TallyTestSupport

/// Projecting a bulk append (issue 35): one that outnumbers what the views hold writes a new
/// generation from the whole log folded, keeping the replaced generation's history; a smaller
/// one catches up in place; a fold of many entities sets its tables' indexes aside and makes
/// them again. Every way ends in the views a rebuild gives.
@Suite struct BulkProjectionTests {
    /// A replica whose views show `projected` expense creates, with `more` appended after them.
    func replica(projected: Int, more: Int) throws -> TestReplica {
        let replica = try TestReplica()
        let writer = try replica.data.openWriter()
        try writer.append((0..<projected).map { SampleEvents.expenseCreate(amount: Int64($0 + 1)) })
        try Projector(directory: replica.data).catchUp()
        if more > 0 { _ = try writer.appendBulk((0..<more).map { SampleEvents.expenseCreate(amount: Int64($0 + 1_000)) }) }
        writer.close()
        return replica
    }

    func rebuildDifferences(_ replica: TestReplica) throws -> [String] {
        try ProjectionRebuilder.rebuild(replica.data, verifyOnly: true).differences
    }

    @Test func aBulkThatOutnumbersTheViewsWritesANewGenerationKeepingTheirHistory() throws {
        let replica = try replica(projected: 30, more: 0)
        let open = try Projector(directory: replica.data)  // a long-running process's projector
        try open.database.write { db in
            try db.execute(sql: "INSERT INTO projection_history (second, last_index) VALUES (1000, 10), (2000, 30)")
        }
        let writer = try replica.data.openWriter()
        _ = try writer.appendBulk((0..<60).map { SampleEvents.expenseCreate(amount: Int64($0 + 1_000)) })
        writer.close()
        var bulk = try Projector(directory: replica.data)
        bulk.freshGenerationFrom = 10
        #expect(try bulk.catchUpInBulk(through: 90) == 60)
        #expect(ProjectionDatabase.currentGeneration(replica.data) == 2)
        #expect(try open.checkpoint() == 90, "an open projector follows the link")
        #expect(try open.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM expenses") } == 90)
        #expect(try open.index(atEndOf: 1500) == 10, "the replaced generation's history stays")
        #expect(try open.index(atEndOf: 2500) == 30)
        #expect(try rebuildDifferences(replica).isEmpty)
    }

    @Test func aSmallerBulkCatchesUpInPlace() throws {
        let replica = try replica(projected: 30, more: 20)
        var bulk = try Projector(directory: replica.data)
        bulk.freshGenerationFrom = 10
        #expect(try bulk.catchUpInBulk(through: 50) == 20)
        #expect(ProjectionDatabase.currentGeneration(replica.data) == 1)
        #expect(try bulk.checkpoint() == 50)
        #expect(try rebuildDifferences(replica).isEmpty)
    }

    @Test func aFoldOfManyEntitiesMakesItsTablesIndexesAgain() throws {
        let replica = try replica(projected: 5, more: ProjectionFold.bulkEntities + 2_500)
        let projector = try Projector(directory: replica.data)
        let indexes = "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name"
        let before = try projector.database.read { try Row.fetchAll($0, sql: indexes) }
        // The first transaction takes `firstBatch` events, the second the rest: a fold of more
        // entities than the expenses table holds, which drops its indexes and makes them again.
        #expect(try projector.catchUp() == ProjectionFold.bulkEntities + 2_500)
        #expect(try projector.database.read { try Row.fetchAll($0, sql: indexes) } == before)
        #expect(try projector.database.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") } == "ok")
        // The indexes answer as the rows say: a month's expenses through `expenses_by_month`.
        let (viaIndex, scanned) = try projector.database.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM expenses INDEXED BY expenses_by_month WHERE month >= ''"),
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM expenses NOT INDEXED")
            )
        }
        #expect(viaIndex == scanned)
        #expect(try rebuildDifferences(replica).isEmpty)
    }

    @Test func aFoldOfFewEntitiesLeavesTheIndexesAlone() throws {
        let replica = try replica(projected: 0, more: 0)
        let projector = try Projector(directory: replica.data)
        try projector.database.write { db in
            let aside = try IndexesSetAside.forWriting(rows: 1, db)
            #expect(!aside.statements.isEmpty, "an empty table is outnumbered by any write")
            try aside.restore(db)
        }
        let writer = try replica.data.openWriter()
        try writer.append((0..<50).map { SampleEvents.expenseCreate(amount: Int64($0 + 1)) })
        writer.close()
        try projector.catchUp()
        try projector.database.write { db in
            let aside = try IndexesSetAside.forWriting(rows: 20, db)
            #expect(aside.statements.filter { $0.contains(" ON expenses ") }.isEmpty, "50 rows are more than twice 20 writes")
            try aside.restore(db)
        }
    }
}

/// The conflict journal written many rows to a statement (`ConflictJournal`): every conflict
/// the merge rules find is journaled once, with its values, whether a transaction holds fewer
/// conflicts than one statement takes or many statements' worth — checked against the
/// conflicts of the same history folded in memory, not against another projection.
@Suite struct ConflictJournalTests {
    @Test(arguments: [40, 600, 3_000]) func everyConflictFoundIsJournaledOnce(events: Int) throws {
        let history = RandomHistory.events(seed: UInt64(events), count: events)
        var state = LedgerState()
        for event in history { state.apply(event) }
        let expected = Set(
            state.conflicts.flatMap { id, conflicts in
                conflicts.map { "\(id)|\($0.property.jsonName)|\($0.loser.timestamp)|\($0.losingValue.json.serialized)|\($0.winningValue.json.serialized)" }
            })
        let views = try emptyViews()
        try views.write { _ = try Projector.applyBatch(RandomHistory.logged(history), $0) }
        let journaled = try views.read { db in
            try Row.fetchAll(db, sql: "SELECT entity_id, property, loser_hlc, losing_value, winning_value FROM conflicts").map { row -> String in
                let (id, property, loser, losing, winning): (String, String, String, String, String) = (
                    row["entity_id"], row["property"], row["loser_hlc"], row["losing_value"], row["winning_value"]
                )
                return "\(id)|\(property)|\(loser)|\(losing)|\(winning)"
            }
        }
        #expect(journaled.count == Set(journaled).count, "each once")
        #expect(Set(journaled) == expected)
        if events >= 3_000 { #expect(expected.count > ConflictJournal.rowsPerStatement, "several statements' worth") }
    }
}
