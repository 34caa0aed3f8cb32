import Foundation
import PropertyBased
import Testing
@testable import TallyCore
import TallyTestSupport

/// Who owes whom (issue 34): parts always add up to the expense, and the settle-up plan always
/// settles every balance with at most n − 1 transfers.
@Suite struct SettleUpTests {
    @Test func theSettleUpPlanSettlesEveryoneInAtMostNMinusOneTransfers() async {
        await propertyCheck(count: 300, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = SplitMix64(seed: seed)
            let people = (0..<Int.random(in: 1...9, using: &rng)).map { "p\($0)" }
            var balances: [String: Int64] = [:]
            for person in people.dropLast() { balances[person] = Int64.random(in: -1_000_000...1_000_000, using: &rng) }
            balances[people.last!] = -balances.values.reduce(0, +)  // they sum to zero
            let plan = SettleUp.plan(balances)
            #expect(plan.count <= max(0, balances.values.filter { $0 != 0 }.count - 1), "seed \(seed)")
            var left = balances
            for step in plan {
                #expect(step.amount > 0 && step.from != step.to)
                left[step.from]! += step.amount
                left[step.to]! -= step.amount
            }
            #expect(left.values.allSatisfy { $0 == 0 }, "seed \(seed): \(left)")
        }
    }

    /// The plan kept in heaps is the plan of its first form, which sorted both sides again
    /// after every transfer (n² log n): the same transfers in the same order, ties by name —
    /// balances drawn from a few values, so ties are common.
    @Test func thePlanIsTheOneSortingAfterEveryTransferMade() async {
        func sortingEveryTime(_ balances: [String: Int64]) -> [(from: String, to: String, amount: Int64)] {
            var debtors = balances.filter { $0.value < 0 }.map { (name: $0.key, left: -$0.value) }
            var creditors = balances.filter { $0.value > 0 }.map { (name: $0.key, left: $0.value) }
            var transfers: [(from: String, to: String, amount: Int64)] = []
            func order(_ a: (name: String, left: Int64), _ b: (name: String, left: Int64)) -> Bool { (a.left, b.name) > (b.left, a.name) }
            while !debtors.isEmpty, !creditors.isEmpty {
                debtors.sort(by: order)
                creditors.sort(by: order)
                let amount = min(debtors[0].left, creditors[0].left)
                transfers.append((debtors[0].name, creditors[0].name, amount))
                debtors[0].left -= amount
                creditors[0].left -= amount
                debtors.removeAll { $0.left == 0 }
                creditors.removeAll { $0.left == 0 }
            }
            return transfers
        }
        await propertyCheck(count: 300, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = SplitMix64(seed: seed)
            let people = (0..<Int.random(in: 1...40, using: &rng)).map { "p\($0)" }
            var balances: [String: Int64] = [:]
            for person in people.dropLast() { balances[person] = [-30, -20, -10, 0, 10, 20, 30].randomElement(using: &rng)! }
            balances[people.last!] = -balances.values.reduce(0, +)
            let expected = sortingEveryTime(balances)
            let plan = SettleUp.plan(balances)
            #expect(plan.map { "\($0.from)>\($0.to):\($0.amount)" } == expected.map { "\($0.from)>\($0.to):\($0.amount)" }, "seed \(seed)")
        }
    }

    @Test func partsAddUpToTheExpense() async {
        await propertyCheck(count: 300, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = SplitMix64(seed: seed)
            let amount = Int64.random(in: 1...Limits.maxAmount, using: &rng)
            let shares = (0..<Int.random(in: 1...Limits.maxSharePeople, using: &rng)).map {
                (name: "p\($0)", value: Int64.random(in: 1...Limits.maxAmount, using: &rng))
            }
            for split in ["equal", "shares"] {
                let parts = SettleUp.parts(of: amount, split: split, shares: shares)
                #expect(parts?.values.reduce(0, +) == amount, "seed \(seed) \(split)")
                #expect(parts?.values.allSatisfy { $0 >= 0 } == true)
            }
            let equal = SettleUp.parts(of: amount, split: "equal", shares: shares)!.values
            #expect(equal.max()! - equal.min()! <= 1, "an equal split differs by at most one minor unit")
        }
        #expect(SettleUp.parts(of: 100, split: "amounts", shares: [("a", 60), ("b", 40)]) == ["a": 60, "b": 40])
        #expect(SettleUp.parts(of: 100, split: "amounts", shares: [("a", 60), ("b", 41)]) == nil, "amounts that do not add up need attention")
        #expect(SettleUp.parts(of: 100, split: "amounts", shares: [("a", .max), ("b", .max)]) == nil, "no overflow")
        #expect(SettleUp.parts(of: 100, split: "weird", shares: [("a", 1)]) == nil)
        #expect(SettleUp.parts(of: 100, split: "shares", shares: []) == nil)
    }

    @Test func sharesAreCheckedAsTheyArrive() throws {
        let field = EntitySpec.expense.field(.shares)!
        #expect(try field.normalize(.json(#"{" jisoo ":2,"minji":1}"#)) == .json(#"{"jisoo":2,"minji":1}"#))
        for bad in [
            #"{}"#, #"{"a":0}"#, #"{"a":-1}"#, #"{"a":1.5}"#, #"{"a":"1"}"#, #"[1]"#, #""x""#, #"{"":1}"#, #"{"a":1," a ":2}"#,
            #"{"a\u0007":1}"#, "{" + (0...Limits.maxSharePeople).map { #""p\#($0)":1"# }.joined(separator: ",") + "}",
        ] {
            #expect(throws: ValidationError.self, "\(bad)") { try field.normalize(.json(bad)) }
        }
    }
}
