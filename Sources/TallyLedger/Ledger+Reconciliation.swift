import Foundation
import TallyCore
import TallyStore

/// Reconciliation (issue 34, docs/HOUSEHOLD.md "Reconciliation"): an account's
/// `reconciledThrough` and `statementBalance` are written as any of its fields are (PATCH
/// /v1/accounts/{id}, `tally account reconcile`); this is what they mean now.
extension LedgerViews {
    /// An account's reconciliation, typed; nil when there is no such account.
    public func reconciliation(of account: UUID) throws -> Reconciliation? { try store.reconciliation(accountID: account.lowercased) }

    /// `{accountId, currency, reconciledThrough, statementBalance, balance, difference,
    /// reconciledAt, clearedCount, changedSince: [{type, id, date, amount, changedAt}]}`.
    public func reconciliationDocument(accountID: UUID) throws -> JSONText {
        guard let reconciliation = try reconciliation(of: accountID) else {
            throw ValidationError(field: "id", "no account with id \(accountID.lowercased)", kind: .notFound)
        }
        func amount(_ sum: AmountSum?) -> JSONText { sum?.value.map { .int($0) } ?? .null }
        let changed: [JSONText] = reconciliation.changedSince.map { line in
            .object([
                ("type", .string(line.type.description)), ("id", .string(line.id)), ("date", .string(line.date)), ("amount", .int(line.amount)),
                ("changedAt", .string(line.changedAt.description)),
            ])
        }
        var fields: [(String, JSONText)] = [("accountId", .string(reconciliation.accountId)), ("currency", .string(reconciliation.currency))]
        fields.append(("reconciledThrough", reconciliation.reconciledThrough.map { .string($0) } ?? .null))
        fields.append(("statementBalance", reconciliation.statementBalance.map { .int($0) } ?? .null))
        fields.append(("balance", reconciliation.reconciledThrough == nil ? .null : amount(reconciliation.balance)))
        fields.append(("difference", amount(reconciliation.difference)))
        fields.append(("reconciledAt", reconciliation.reconciledAt.map { .string($0.description) } ?? .null))
        fields += [("clearedCount", .int(Int64(reconciliation.clearedCount))), ("changedSince", .array(changed))]
        return .object(fields)
    }
}
