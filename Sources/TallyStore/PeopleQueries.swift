import Foundation
import GRDB
import TallyCore

/// Who paid and who owes (issue 34): each person's net per currency from the expenses that
/// name who paid and how they are shared, and the settlements between people.
public struct PeopleBalances: Sendable, Equatable {
    /// Per currency, per person: positive is owed to them, negative they owe.
    public var balances: [String: [String: Int64]]
    /// Expenses whose parts do not add up (amounts that no longer sum to the expense after
    /// concurrent edits): left out of the balances, to be looked at.
    public var needsAttention: [String]
    /// A person's net that no longer fits an Int64 (in no real household): left out, named.
    public var overflowed: [String]
}

extension ProjectionQueries {
    public static func peopleBalances(_ db: Database) throws -> PeopleBalances {
        var result = PeopleBalances(balances: [:], needsAttention: [], overflowed: [])
        var overflowed: Set<String> = []
        func add(_ currency: String, _ person: String, _ amount: Int64) {
            let (sum, overflow) = result.balances[currency, default: [:]][person, default: 0].addingReportingOverflow(amount)
            // Int64.min has no opposite: as good as overflowed (a settle-up negates balances).
            if overflow || sum == .min { overflowed.insert(person) } else { result.balances[currency, default: [:]][person] = sum }
        }
        for row in try Row.fetchAll(
            db, sql: "SELECT id, amount, currency, paid_by, split, shares FROM expenses WHERE paid_by IS NOT NULL AND kind = 'expense' ORDER BY id")
        {
            let (id, amount, currency, payer): (String, Int64, String, String) = (row["id"], row["amount"], row["currency"], row["paid_by"])
            let text: String? = row["shares"]
            let shares: [(name: String, value: Int64)] =
                text.flatMap { try? StrictJSON.parse(Array($0.utf8)) }.flatMap { json -> [(name: String, value: Int64)]? in
                    guard case .object(let pairs) = json else { return nil }
                    return pairs.compactMap { name, value in if case .integer(let number) = value { (name, number) } else { nil } }
                } ?? []
            guard !shares.isEmpty else { continue }  // paid by someone, shared with nobody: nothing owed
            guard let parts = SettleUp.parts(of: amount, split: row["split"] ?? "equal", shares: shares) else {
                result.needsAttention.append(id)
                continue
            }
            add(currency, payer, amount)
            for (person, part) in parts { add(currency, person, -part) }
        }
        for row in try Row.fetchAll(db, sql: "SELECT paid_by, paid_to, amount, currency FROM settlements") {
            add(row["currency"], row["paid_by"], row["amount"])
            add(row["currency"], row["paid_to"], 0 &- (row["amount"] as Int64))  // amounts are 1 … 10^15
        }
        result.overflowed = overflowed.sorted()
        for person in overflowed { for currency in result.balances.keys { result.balances[currency]?[person] = nil } }
        return result
    }

    public static func settlementJSON(_ db: Database, id: String) throws -> JSONText? {
        let statement = try db.cachedStatement(sql: "SELECT \(ViewRecordJSON.Selection.settlements.sql) FROM settlements s WHERE s.id = ?")
        return oneJSON(try ViewRecordJSON.write(statement, [id], .settlements, isHeld: { _ in true }, db))
    }
}
