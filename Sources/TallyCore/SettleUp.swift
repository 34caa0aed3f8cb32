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
    public static func plan(_ balances: [String: Int64]) -> [(from: String, to: String, amount: Int64)] {
        var debtors = balances.filter { $0.value < 0 && $0.value != .min }.map { (name: $0.key, left: -$0.value) }
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
}
