import Foundation
import GRDB
import PropertyBased
import Synchronization
import Testing
@testable import TallyStore
import TallyCore
import TallyTestSupport

/// Views written from empty (a rebuild, a first load, a new generation) sum their running
/// totals once from the rows (`TotalsSetAside`) instead of keeping them row by row: for random
/// histories, the totals of views written so equal those the triggers kept while the same
/// events were projected incrementally, in random orders and batchings.
@Suite struct TotalsSetAsideTests {
    /// Every total that counts some rows, as text, in key order.
    static func totals(_ db: Database) throws -> [String] {
        try String.fetchAll(
            db,
            sql: """
                SELECT 'month|' || month || '|' || category_id || '|' || kind || '|' || currency || '|' || high || '|' || low || '|' || n
                FROM month_totals WHERE \(ViewChecksum.someTotal)
                UNION ALL
                SELECT 'day|' || account_id || '|' || day || '|' || currency || '|' || high || '|' || low || '|' || n
                FROM account_days WHERE \(ViewChecksum.someTotal)
                ORDER BY 1
                """)
    }

    @Test func totalsSummedFromTheRowsEqualThoseTheTriggersKeep() async throws {
        let folder = try TemporaryDirectory()
        let movingMoney = Mutex(0)  // histories whose accounts have days of money: the test must see some
        await propertyCheck(count: 25, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            let events = RandomHistory.events(seed: seed, count: 200)
            var rng = SplitMix64(seed: seed ^ 0x7071)
            let incremental = try! emptyViews()
            try! applyIncrementally(RandomHistory.logged(events.shuffled(using: &rng)), to: incremental, batches: [Int.random(in: 1...30, using: &rng)])
            let kept = try! incremental.read(Self.totals)
            if kept.contains(where: { $0.hasPrefix("day|") }) { movingMoney.withLock { $0 += 1 } }
            #expect(try! rebuilt(RandomHistory.logged(events)).read(Self.totals) == kept, "seed \(seed), rebuilt")
            #expect(try! rebuiltAsNewGeneration(RandomHistory.logged(events), in: folder).read(Self.totals) == kept, "seed \(seed), new generation")
        }
        #expect(movingMoney.withLock { $0 } >= 10)
    }

    @Test func theTriggersAreBackAfterAFill() throws {
        let folder = try TemporaryDirectory()
        let events = RandomHistory.logged(RandomHistory.events(seed: 7, count: 50))
        func triggers(_ queue: DatabaseQueue) throws -> [String] {
            try queue.read { try String.fetchAll($0, sql: "SELECT name || ': ' || sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name") }
        }
        let migrated = try triggers(try emptyViews())
        #expect(try triggers(try rebuilt(events)) == migrated)
        #expect(try triggers(try rebuiltAsNewGeneration(events, in: folder)) == migrated)
        #expect(migrated.count == TotalsSetAside.names.count, "every trigger the views have keeps a total")
    }

    /// A total that counts no rows but holds an amount is drift a rebuild's verify names; a
    /// row of zeros (what deleting every row leaves) is not.
    @Test func aRebuildNamesATotalThatHoldsAnAmountForNoRows() throws {
        let queue = try emptyViews()
        try queue.write { db in
            try db.execute(sql: "INSERT INTO account_days (account_id, day, currency, high, low, n) VALUES ('a', 1, '', 0, 0, 0)")
        }
        let clean = try queue.read(ViewChecksum.compute)
        #expect(clean == (try emptyViews().read(ViewChecksum.compute)), "a row of zeros is no difference")
        try queue.write { try $0.execute(sql: "UPDATE account_days SET high = 5") }
        #expect(clean.differences(from: try queue.read(ViewChecksum.compute)).contains { $0.hasPrefix("account_days") })
    }
}
