import Foundation
import TallyCore
import TallyStore

/// Who paid and who owes (issue 34, docs/HOUSEHOLD.md "Who paid and who owes"): each person's
/// balance per currency, and the fewest transfers that settle them.
extension LedgerViews {
    /// `{items: [{name, currency, balance}], settle: [{from, to, amount, currency}],
    /// needsAttention: [expense ids]}`: positive is owed to a person, negative they owe; per
    /// currency, at most n − 1 transfers settle everyone (`SettleUp.plan`).
    public func peopleDocument() throws -> JSONText {
        let people = try store.peopleBalances()
        var items: [JSONText] = []
        var settle: [JSONText] = []
        for (currency, balances) in people.balances.sorted(by: { $0.key < $1.key }) {
            for (name, balance) in balances.sorted(by: { $0.key < $1.key }) {
                items.append(.object([("name", .string(name)), ("currency", .string(currency)), ("balance", .int(balance))]))
            }
            for transfer in SettleUp.plan(balances) {
                settle.append(
                    .object([
                        ("from", .string(transfer.from)), ("to", .string(transfer.to)), ("amount", .int(transfer.amount)), ("currency", .string(currency)),
                    ]))
            }
        }
        return .object([
            ("items", .array(items)), ("settle", .array(settle)), ("needsAttention", .array(people.needsAttention.map { .string($0) })),
            ("overflowed", .array(people.overflowed.map { .string($0) })),
        ])
    }
}
