import Foundation
import GRDB
import PropertyBased
import Testing
@testable import TallyStore
import TallyCore
import TallyLog
import TallyTestSupport

/// Account balances (issue 34) against a brute-force recomputation from the merged events:
/// random histories of accounts, transfers and expenses naming accounts (created, edited,
/// deleted) from three origins, projected in several random orders and batchings — as three
/// replicas merging in different orders do — and read at random moments.
@Suite struct AccountBalanceTests {
    /// What a balance is, from the merged state alone: opening balance from the opening day,
    /// plus incomes, less expenses (in the account's currency), less transfers out, plus
    /// transfers in (`toAmount`, else `amount`), all up to `at`.
    static func bruteForce(_ state: LedgerState, at: Int64) -> [String: Int64] {
        var balances: [EntityID: Int64] = [:]
        var currencies: [EntityID: String] = [:]
        for (id, entity) in state.entities where entity.isLive && entity.type == .account {
            guard case .string(let name)? = entity.value(.name), !name.isEmpty, case .string(let currency)? = entity.value(.currency),
                case .int(let opening)? = entity.value(.openingBalance), case .dateTime(let day)? = entity.value(.openingDate),
                entity.value(.kind) != nil, entity.value(.isArchived) != nil
            else { continue }
            balances[id] = day.epochMillis <= at ? opening : 0
            currencies[id] = currency
        }
        for entity in state.entities.values where entity.isLive {
            switch entity.type {
            case .expense:
                guard case .uuid(let account)? = entity.value(.accountId), let currency = currencies[.uuid(account)],
                    case .int(let amount)? = entity.value(.amount), case .string(let kind)? = entity.value(.kind),
                    case .string(let own)? = entity.value(.currency), case .dateTime(let date)? = entity.value(.date), date.epochMillis <= at,
                    own == currency, entity.value(.repeat) != nil
                else { continue }
                balances[.uuid(account)]! += kind == "income" ? amount : -amount
            case .transfer:
                guard case .uuid(let from)? = entity.value(.accountId), case .uuid(let to)? = entity.value(.toAccountId),
                    case .int(let amount)? = entity.value(.amount), case .dateTime(let date)? = entity.value(.date), date.epochMillis <= at
                else { continue }
                var arriving = amount
                if case .int(let other)? = entity.value(.toAmount) { arriving = other }
                if balances[.uuid(from)] != nil { balances[.uuid(from)]! -= amount }
                if balances[.uuid(to)] != nil { balances[.uuid(to)]! += arriving }
            default: continue
            }
        }
        return Dictionary(uniqueKeysWithValues: balances.map { ($0.key.description, $0.value) })
    }

    @Test func balancesEqualABruteForceRecomputationInEveryMergeOrder() async {
        await propertyCheck(count: 60, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            let events = RandomHistory.events(seed: seed, count: 150)
            var state = LedgerState()
            for event in events { state.apply(event) }
            var rng = SplitMix64(seed: seed ^ 0x5EED)
            let moments = (0..<4).map { _ in 1_767_225_600_000 + Int64.random(in: -86_400_000...(95 * 86_400_000), using: &rng) } + [Int64.max - 1]
            for replica in 0..<3 {
                let order = replica == 0 ? events : events.shuffled(using: &rng)
                let queue = try! emptyViews()
                try! applyIncrementally(RandomHistory.logged(order), to: queue, batches: [Int.random(in: 1...40, using: &rng)])
                for at in moments {
                    let shown = try! queue.read { try ProjectionQueries.accountBalances($0, at: at) }
                    let expected = Self.bruteForce(state, at: at)
                    #expect(
                        Dictionary(uniqueKeysWithValues: shown.map { ($0.id, $0.balance.value ?? .min) }) == expected,
                        "seed \(seed), replica \(replica), at \(at)")
                }
            }
            let rebuiltViews = try! rebuilt(RandomHistory.logged(events))
            let fromRebuild = try! rebuiltViews.read { try ProjectionQueries.accountBalances($0, at: .max - 1) }
            #expect(Dictionary(uniqueKeysWithValues: fromRebuild.map { ($0.id, $0.balance.value ?? .min) }) == Self.bruteForce(state, at: .max - 1))
        }
    }
}

/// The month totals a report reads, kept by triggers, against the expense rows they total: for
/// random histories projected in random orders and batchings, and rebuilt.
@Suite struct MonthTotalsTests {
    static func fromTriggers(_ db: Database) throws -> [String] {
        try String.fetchAll(
            db,
            sql: """
                SELECT month || '|' || category_id || '|' || kind || '|' || currency || '|' || (high * 1000000000 + low) || '|' || n
                FROM month_totals WHERE n > 0 ORDER BY 1
                """)
    }

    static func fromRows(_ db: Database) throws -> [String] {
        try String.fetchAll(
            db,
            sql: """
                SELECT month || '|' || COALESCE(category_id, '') || '|' || kind || '|' || currency || '|' || SUM(amount) || '|' || count(*)
                FROM expenses GROUP BY month, COALESCE(category_id, ''), kind, currency ORDER BY 1
                """)
    }

    @Test func theTotalsAlwaysAgreeWithTheRows() async {
        await propertyCheck(count: 60, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            let events = RandomHistory.events(seed: seed, count: 150)
            var rng = SplitMix64(seed: seed ^ 0x7074)
            let queue = try! emptyViews()
            try! applyIncrementally(RandomHistory.logged(events.shuffled(using: &rng)), to: queue, batches: [Int.random(in: 1...30, using: &rng)])
            #expect(try! queue.read(Self.fromTriggers) == (try! queue.read(Self.fromRows)), "seed \(seed)")
            let rebuiltViews = try! rebuilt(RandomHistory.logged(events))
            #expect(try! rebuiltViews.read(Self.fromTriggers) == (try! rebuiltViews.read(Self.fromRows)), "seed \(seed), rebuilt")
        }
    }
}
