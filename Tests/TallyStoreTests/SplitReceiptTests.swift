import Foundation
import GRDB
import PropertyBased
import Testing
@testable import TallyStore
import TallyCore
import TallyLog
import TallyTestSupport

/// Split receipts (issue 34): category totals count each line in its own category and the
/// rest of its expense in the expense's, whatever order three replicas' events merge in; a
/// line whose expense has not arrived counts nowhere until it does.
@Suite struct SplitReceiptTests {
    struct Key: Hashable { var month, category, kind, currency: String }

    /// The totals from the merged state alone: each live expense's amount in its shown
    /// category, then each live line of a live expense moving its amount from the expense's
    /// category to its own (none: the expense's).
    static func bruteForce(_ state: LedgerState, winners: [String: String]) -> [Key: Int64] {
        func shown(_ value: PropertyValue?) -> String {
            guard case .uuid(let id)? = value else { return "" }
            return winners[id.lowercased] ?? id.lowercased
        }
        var expenses: [EntityID: Key] = [:]
        var totals: [Key: Int64] = [:]
        for (id, entity) in state.entities where entity.isLive && entity.type == .expense {
            guard case .string(let kind)? = entity.value(.kind), case .int(let amount)? = entity.value(.amount),
                case .string(let currency)? = entity.value(.currency), case .dateTime(let date)? = entity.value(.date), entity.value(.repeat) != nil
            else { continue }
            let key = Key(month: date.localMonth, category: shown(entity.value(.categoryId)), kind: kind, currency: currency)
            expenses[id] = key
            totals[key, default: 0] += amount
        }
        for entity in state.entities.values where entity.isLive && entity.type == .line {
            guard case .uuid(let parent)? = entity.value(.expenseId), let expense = expenses[.uuid(parent)], case .int(let amount)? = entity.value(.amount)
            else { continue }
            var target = expense
            if entity.value(.categoryId) != nil, entity.value(.categoryId) != .null { target.category = shown(entity.value(.categoryId)) }
            totals[expense, default: 0] -= amount
            totals[target, default: 0] += amount
        }
        return totals.filter { $0.value != 0 }
    }

    static func fromViews(_ db: Database) throws -> [Key: Int64] {
        var totals: [Key: Int64] = [:]
        for total in try ProjectionQueries.monthTotals(db, from: "2000-01", to: "2100-12") {
            let key = Key(month: total.month, category: total.categoryId ?? "", kind: total.kind, currency: total.currency)
            totals[key, default: 0] += total.total.value ?? .min
        }
        return totals.filter { $0.value != 0 }
    }

    @Test func categoryTotalsCountEachLineInItsOwnCategoryInEveryMergeOrder() async {
        await propertyCheck(count: 60, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            let events = RandomHistory.events(seed: seed, count: 150)
            var state = LedgerState()
            for event in events { state.apply(event) }
            var rng = SplitMix64(seed: seed ^ 0x5b11)
            for _ in 0..<2 {
                let queue = try! emptyViews()
                try! applyIncrementally(RandomHistory.logged(events.shuffled(using: &rng)), to: queue, batches: [Int.random(in: 1...30, using: &rng)])
                let winners = try! queue.read { try ViewRows.categoryWinners($0) }
                #expect(try! queue.read(Self.fromViews) == Self.bruteForce(state, winners: winners), "seed \(seed)")
            }
        }
    }

    @Test func aLineWhoseExpenseHasNotArrivedCountsNowhereUntilItDoes() throws {
        let origin = RandomHistory.origins[0]
        let (expense, line, category) = (UUID.random(), UUID.random(), UUID.random())
        let day = DateTime(epochMillis: 1_767_225_600_000, offsetMinutes: 540)
        let lineEvent = Event(
            origin: origin, sequence: 1, timestamp: HybridTimestamp(millis: 1_000, counter: 0), actor: "peer", entityType: .line, entityID: .uuid(line),
            operation: .create, properties: [.expenseId: .uuid(expense), .categoryId: .uuid(category), .amount: .int(30_000)], previousHash: .zero)
        let expenseEvent = Event(
            origin: origin, sequence: 2, timestamp: HybridTimestamp(millis: 1_001, counter: 0), actor: "peer", entityType: .expense,
            entityID: .uuid(expense), operation: .create,
            properties: [.kind: .string("expense"), .amount: .int(100_000), .currency: .string("KRW"), .date: .dateTime(day), .repeat: .string("none")],
            previousHash: .zero)
        let queue = try emptyViews()
        try applyIncrementally(RandomHistory.logged([lineEvent]), to: queue, batches: [1])
        let waiting = try queue.read { try ProjectionQueries.splitReceiptsJSON($0) }?.serialized ?? ""
        #expect(waiting.contains(#""receipts":[]"#) && waiting.contains(line.lowercased), "\(waiting)")
        #expect(try queue.read(Self.fromViews).isEmpty)

        try queue.write { db in _ = try Projector.applyBatch([LoggedEvent(index: 2, event: expenseEvent, hash: .zero, segment: "", frameOffset: 0)], db) }
        let month = day.localMonth
        #expect(
            try queue.read(Self.fromViews) == [
                Key(month: month, category: "", kind: "expense", currency: "KRW"): 70_000,
                Key(month: month, category: category.lowercased, kind: "expense", currency: "KRW"): 30_000,
            ])
        let receipt = try queue.read { try ProjectionQueries.splitReceiptsJSON($0, expenseID: expense.lowercased) }?.serialized ?? ""
        #expect(receipt.contains(#""assigned":30000,"unassigned":70000,"needsAttention":true"#), "\(receipt)")
    }

    /// Two replicas each re-split a ₩120,000 receipt so that it adds up; merged property by
    /// property, the lines add up to neither: shown as needing attention, never "fixed".
    @Test func concurrentSplitsThatEachAddUpMergeIntoOneThatNeedsAttention() throws {
        let (a, b) = (RandomHistory.origins[0], RandomHistory.origins[1])
        let (expense, first, second, third) = (UUID.random(), UUID.random(), UUID.random(), UUID.random())
        var sequences: [ReplicaID: UInt64] = [:]
        var millis: UInt64 = 1_000
        func event(_ origin: ReplicaID, _ type: EntityType, _ id: UUID, _ operation: EventOperation, _ properties: PropertyMap) -> Event {
            sequences[origin, default: 0] += 1
            millis += 1
            return Event(
                origin: origin, sequence: sequences[origin]!, timestamp: HybridTimestamp(millis: millis, counter: 0), actor: "\(origin)",
                entityType: type, entityID: .uuid(id), operation: operation, properties: properties, previousHash: .zero)
        }
        let day = DateTime(epochMillis: 1_767_225_600_000, offsetMinutes: 540)
        let shared = [
            event(
                a, .expense, expense, .create,
                [.kind: .string("expense"), .amount: .int(120_000), .currency: .string("KRW"), .date: .dateTime(day), .repeat: .string("none")]),
            event(a, .line, first, .create, [.expenseId: .uuid(expense), .amount: .int(80_000)]),
            event(a, .line, second, .create, [.expenseId: .uuid(expense), .amount: .int(40_000)]),
        ]
        // A: 70,000 + 40,000 + a new 10,000 line. B (later): 60,000 + 60,000.
        let onA = [
            event(a, .line, first, .update, [.amount: .int(70_000)]), event(a, .line, third, .create, [.expenseId: .uuid(expense), .amount: .int(10_000)]),
        ]
        let onB = [event(b, .line, first, .update, [.amount: .int(60_000)]), event(b, .line, second, .update, [.amount: .int(60_000)])]
        for order in [shared + onA + onB, shared + onB + onA] {
            let queue = try emptyViews()
            try applyIncrementally(RandomHistory.logged(order), to: queue, batches: [1])
            let receipt = try queue.read { try ProjectionQueries.splitReceiptsJSON($0, expenseID: expense.lowercased) }?.serialized ?? ""
            #expect(receipt.contains(#""assigned":130000,"unassigned":-10000,"needsAttention":true"#), "\(receipt)")
            let all = try queue.read { try ProjectionQueries.splitReceiptsJSON($0) }?.serialized ?? ""
            #expect(all.hasPrefix(#"{"receipts":[{"expenseId":"\#(expense.lowercased)""#), "\(all)")
        }
    }
}
