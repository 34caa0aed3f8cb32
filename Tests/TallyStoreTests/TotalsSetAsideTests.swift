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
                FROM month_totals WHERE n <> 0
                UNION ALL
                SELECT 'day|' || account_id || '|' || day || '|' || currency || '|' || high || '|' || low || '|' || n
                FROM account_days WHERE n <> 0
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
        let queue = try rebuilt(RandomHistory.logged(RandomHistory.events(seed: 7, count: 50)))
        let triggers = try queue.read { try String.fetchAll($0, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name") }
        let migrated = try emptyViews().read { try String.fetchAll($0, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name") }
        #expect(triggers == migrated)
        #expect(triggers.count == 9)
    }
}
