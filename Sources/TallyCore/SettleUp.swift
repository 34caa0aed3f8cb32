/// Who owes whom in a household (issue 34, docs/HOUSEHOLD.md "Who paid and who owes").
public enum SettleUp {
    /// How an expense of `amount` is shared: `equal` among the names of `shares` (their numbers
    /// ignored), by `shares` (each name's number a weight), or by `amounts` (each name's number
    /// its part, in minor units). Parts are whole minor units that add up to `amount`: a
    /// remainder goes one unit at a time to the largest fractions, ties by name. Nil when the
    /// parts cannot add up — amounts that do not sum to the expense (after concurrent edits on
    /// two replicas, say: a rule that ties two properties together cannot survive merging), or
    /// weights that sum to nothing — for the caller to show as needing attention.
    public static func parts(of amount: Int64, split: String, shares: [(name: String, value: Int64)]) -> [String: Int64]? {
        guard amount > 0, !shares.isEmpty else { return nil }
        switch split {
        case "amounts":
            var total: Int64 = 0
            for share in shares {
                let (sum, overflow) = total.addingReportingOverflow(share.value)
                guard !overflow else { return nil }
                total = sum
            }
            guard total == amount else { return nil }
            return Dictionary(shares.map { ($0.name, $0.value) }, uniquingKeysWith: +)
        case "shares", "equal":
            let weights = shares.map { (name: $0.name, weight: split == "equal" ? Int64(1) : $0.value) }
            var total: Int64 = 0
            for item in weights {
                guard item.weight > 0 else { return nil }
                let (sum, overflow) = total.addingReportingOverflow(item.weight)
                guard !overflow else { return nil }
                total = sum
            }
            // amount × weight / total without overflow: amount and weights are at most 10^15.
            var parts: [String: Int64] = [:]
            var remainders: [(name: String, remainder: Int64)] = []
            var given: Int64 = 0
            for item in weights {
                let (high, low) = amount.multipliedFullWidth(by: item.weight)
                let (quotient, remainder) = total.dividingFullWidth((high, low))
                parts[item.name, default: 0] += quotient
                given += quotient
                remainders.append((item.name, remainder))
            }
            for item in remainders.sorted(by: { ($0.remainder, $1.name) > ($1.remainder, $0.name) }).prefix(Int(amount - given)) {
                parts[item.name, default: 0] += 1
            }
            return parts
        default:
            return nil
        }
    }

    /// Transfers that settle `balances` (each person's net: positive is owed to them,
    /// negative owes; they sum to zero): the largest debtor pays the largest creditor as much
    /// as either has left, until nobody has anything left — at most n − 1 transfers, as each
    /// settles at least one person. Deterministic: ties by name.
    ///
    /// The largest of each side is kept at the top of a heap, so a plan for n people costs
    /// n log n: sorting both sides again after every transfer cost n² log n, a minute or two
    /// of a request for a ledger whose expenses named 100,000 people (found by review).
    public static func plan(_ balances: [String: Int64]) -> [(from: String, to: String, amount: Int64)] {
        var debtors = LargestFirst(balances.filter { $0.value < 0 && $0.value != .min }.map { Balance(name: $0.key, left: -$0.value) })
        var creditors = LargestFirst(balances.filter { $0.value > 0 }.map { Balance(name: $0.key, left: $0.value) })
        var transfers: [(from: String, to: String, amount: Int64)] = []
        while var debtor = debtors.popLargest(), var creditor = creditors.popLargest() {
            let amount = min(debtor.left, creditor.left)
            transfers.append((debtor.name, creditor.name, amount))
            debtor.left -= amount
            creditor.left -= amount
            if debtor.left > 0 { debtors.insert(debtor) }
            if creditor.left > 0 { creditors.insert(creditor) }
        }
        return transfers
    }

    /// What one person has left to pay or to be paid; the larger first, ties by name.
    struct Balance {
        var name: String
        var left: Int64
        func comesBefore(_ other: Balance) -> Bool { (left, other.name) > (other.left, name) }
    }

    /// A binary heap of balances with the one that `comesBefore` all others at its root.
    struct LargestFirst {
        private var items: [Balance] = []

        init(_ balances: [Balance]) {
            for balance in balances { insert(balance) }
        }

        mutating func insert(_ balance: Balance) {
            items.append(balance)
            var child = items.count - 1
            while child > 0, items[child].comesBefore(items[(child - 1) / 2]) {
                items.swapAt(child, (child - 1) / 2)
                child = (child - 1) / 2
            }
        }

        mutating func popLargest() -> Balance? {
            guard !items.isEmpty else { return nil }
            items.swapAt(0, items.count - 1)
            let largest = items.removeLast()
            var parent = 0
            while true {
                let (left, right) = (2 * parent + 1, 2 * parent + 2)
                var first = parent
                if left < items.count, items[left].comesBefore(items[first]) { first = left }
                if right < items.count, items[right].comesBefore(items[first]) { first = right }
                guard first != parent else { return largest }
                items.swapAt(parent, first)
                parent = first
            }
        }
    }
}
