import Foundation
import GRDB
import PropertyBased
import Testing
@testable import TallyStore
import TallyCore
import TallyLog
import TallyTestSupport

@Suite struct ProjectionTests {
    /// For random histories, incrementally built views equal a fresh rebuild row for row — and
    /// so do views built from the same events in a shuffled order (the merge is commutative),
    /// and views written as a new generation is (entity states through a side file).
    @Test func incrementalViewsEqualARebuild() async {
        let folder = TemporaryDirectory()
        await propertyCheck(count: 150, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            do {
                var rng = SplitMix64(seed: seed)
                let events = RandomHistory.logged(RandomHistory.events(seed: seed, count: Int.random(in: 1...80, using: &rng)))
                let incremental = try emptyViews()
                try applyIncrementally(events, to: incremental, batches: [Int.random(in: 1...10, using: &rng), 1, 3])
                let shuffled = try emptyViews()
                try applyIncrementally(RandomHistory.logged(events.map(\.event).shuffled(using: &rng)), to: shuffled, batches: [7])
                let fresh = try rebuilt(events)
                let generation = try rebuiltAsNewGeneration(events, in: folder)
                let sums = try [incremental, shuffled, fresh, generation].map { try $0.read { try ViewChecksum.compute($0) } }
                #expect(sums[0].differences(from: sums[2]) == [], "seed \(seed)")
                #expect(sums[3] == sums[2], "seed \(seed)")
                // The conflict journal records what arrived in which order; the views themselves must not care.
                #expect(sums[1].differences(from: sums[2]).filter { !$0.hasPrefix("conflicts") } == [], "seed \(seed)")
                #expect(try incremental.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") } == "ok")
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }

    @Test func applyingTheSameBatchTwiceIsHarmless() throws {
        let directory = try TestReplica()
        let writer = try directory.data.openWriter()
        let events = try writer.append((0..<10).map { SampleEvents.expenseCreate(amount: Int64($0 + 1)) })
        let projector = try Projector(directory: directory.data)
        let logged = RandomHistory.logged(events)
        #expect(try projector.apply(logged).count == 10)
        #expect(try projector.apply(logged).count == 0)
        #expect(try projector.checkpoint() == 10)
        #expect(try projector.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM expenses") } == 10)
    }

    /// Summaries against totals computed here, independently, from the events themselves.
    @Test func summariesMatchTotalsComputedFromTheEvents() async {
        await propertyCheck(count: 60, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            do {
                let events = RandomHistory.logged(RandomHistory.events(seed: seed, count: 120))
                let views = try emptyViews()
                try applyIncrementally(events, to: views, batches: [5])
                var state = LedgerState()
                events.forEach { state.apply($0.event) }
                var expected: [String: [String: (income: Int64, expense: Int64, count: Int)]] = [:]  // month → currency → totals
                for entity in state.entities.values where entity.type == .expense && entity.isLive {
                    let values = entity.values
                    guard case .int(let amount)? = values[.amount], case .string(let currency)? = values[.currency],
                        case .dateTime(let date)? = values[.date], case .string(let kind)? = values[.kind]
                    else { continue }
                    var total = expected[date.localMonth, default: [:]][currency, default: (0, 0, 0)]
                    if kind == "income" { total.income += amount } else { total.expense += amount }
                    total.count += 1
                    expected[date.localMonth, default: [:]][currency] = total
                }
                for (month, currencies) in expected {
                    let summary = try views.read { try ProjectionQueries.summary($0, month: month) }
                    for total in summary.totals {
                        let want = currencies[total.currency]
                        #expect(
                            total.income.value == want?.income && total.expense.value == want?.expense && total.count == want?.count, "seed \(seed) \(month)")
                    }
                    #expect(summary.totals.count == currencies.count)
                    let categorySum = summary.byCategory.reduce(Int64(0)) { $0 + $1.amount.value! }
                    let paymentSum = summary.byPayment.reduce(Int64(0)) { $0 + $1.amount.value! }
                    let all = currencies.values.reduce(Int64(0)) { $0 + $1.income + $1.expense }
                    #expect(categorySum == all && paymentSum == all, "groups add up to the totals")
                }
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }

    @Test func subCategoriesRollUpIntoTheirTopLevelCategory() throws {
        let food = UUID(), lunch = UUID(), snack = UUID()
        let origin = ReplicaID.random()
        var sequence: UInt64 = 0
        func event(_ id: UUID, _ type: EntityType, _ properties: PropertyMap) -> Event {
            sequence += 1
            return Event(
                origin: origin, sequence: sequence, timestamp: HybridTimestamp(millis: sequence, counter: 0), actor: "t",
                entityType: type, entityID: .uuid(id), operation: .create, properties: properties, previousHash: .zero)
        }
        let march = DateTime(iso8601: "2026-03-10T12:00:00+09:00")!
        let events = [
            event(food, .category, [.name: .string("Food"), .kind: .string("expense")]),
            event(lunch, .category, [.name: .string("Lunch"), .kind: .string("expense"), .parentId: .uuid(food)]),
            event(snack, .category, [.name: .string("Snack"), .kind: .string("expense"), .parentId: .uuid(lunch)]),
            event(
                UUID(), .expense,
                [
                    .kind: .string("expense"), .amount: .int(100), .currency: .string("KRW"), .date: .dateTime(march), .repeat: .string("none"),
                    .categoryId: .uuid(snack),
                ]),
            event(
                UUID(), .expense,
                [
                    .kind: .string("expense"), .amount: .int(20), .currency: .string("KRW"), .date: .dateTime(march), .repeat: .string("none"),
                    .categoryId: .uuid(food),
                ]),
        ]
        let views = try emptyViews()
        try applyIncrementally(RandomHistory.logged(events), to: views, batches: [10])
        let summary = try views.read { try ProjectionQueries.summary($0, month: "2026-03") }
        #expect(summary.byCategory.map(\.label) == ["Food"])
        #expect(summary.byCategory.first?.amount.value == 120)
        let underFood = try views.read { db -> [ExpenseRow] in
            var filter = ExpenseFilter()
            filter.categoryId = food.lowercased
            return try ProjectionQueries.expenses(db, filter)
        }
        #expect(underFood.count == 2, "a category filter includes sub-categories")
    }

    /// A log that already holds amounts no longer allowed (written before incoming events were
    /// checked) must not crash a summary: totals that do not fit say so.
    @Test func totalsThatDoNotFitAreReportedNotTrapped() throws {
        let origin = ReplicaID.random()
        let march = DateTime(iso8601: "2026-03-10T12:00:00+09:00")!
        func expense(_ sequence: UInt64, amount: Int64, payment: String) -> Event {
            let properties: PropertyMap = [
                .kind: .string("expense"), .amount: .int(amount), .currency: .string("KRW"), .date: .dateTime(march),
                .repeat: .string("none"), .payment: .string(payment),
            ]
            return Event(
                origin: origin, sequence: sequence, timestamp: HybridTimestamp(millis: sequence, counter: 0), actor: "t",
                entityType: .expense, entityID: .uuid(UUID()), operation: .create, properties: properties, previousHash: .zero)
        }
        let events = [expense(1, amount: .max, payment: "card"), expense(2, amount: .max, payment: "card"), expense(3, amount: 5, payment: "cash")]
        let views = try emptyViews()
        try applyIncrementally(RandomHistory.logged(events), to: views, batches: [10])
        let summary = try views.read { try ProjectionQueries.summary($0, month: "2026-03") }
        #expect(summary.totals.count == 1 && summary.totals[0].expense.overflowed && summary.totals[0].net.overflowed)
        #expect(summary.totals[0].count == 3)
        #expect(summary.byPayment.first { $0.label == "cash" }?.amount.value == 5, "a group that fits keeps its total")
        #expect(summary.byPayment.first { $0.label == "card" }?.amount.overflowed == true)
        let json = ViewJSON.summary(summary).serialized
        #expect(json.contains(#""expense":null"#) && json.contains(#""overflow":true"#))
        let months = try views.read { try ProjectionQueries.monthlyTotals($0) }
        #expect(months.count == 1 && months[0].total.expense.overflowed)
    }
}

/// A data directory in a temporary folder.
struct TestReplica {
    let folder = TemporaryDirectory("tally-store")
    let data: DataDirectory
    init() throws { data = try DataDirectory.create(path: folder.file("data"), name: "test") }
}
