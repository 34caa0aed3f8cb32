import Foundation
import Testing
import TallyCore
import TallyKit
import TallyTestSupport

/// Typed writes and queries for every entity: accounts, transfers, card bills, settlements,
/// recurring entries, rules and rates, through the kit as through the service.
@Suite struct MoreEntitiesTests {
    @Test func accountsTransfersBillsAndSettlementsThroughTheKit() async throws {
        let folder = TemporaryDirectory("kit")
        let replica = try await Replica.open(at: folder.file("ledger"), actor: "minji")
        let opened = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01
        let bank = try await replica.create(AccountFields(name: "Bank", openingBalance: 100_000, openingDate: opened))
        let card = try await replica.create(AccountFields(name: "Card", kind: .card, openingDate: opened, closingDay: 14, paymentDay: 1))
        try await replica.create(ExpenseFields(amount: 30_000, date: Date(timeIntervalSince1970: 1_768_000_000)))  // not on an account
        try await replica.create(TransferFields(from: bank, to: card, amount: 20_000, date: Date(timeIntervalSince1970: 1_768_000_000)))
        let balances = Dictionary(uniqueKeysWithValues: try replica.query.balances().map { ($0.name, $0.balance.value) })
        #expect(balances == ["Bank": 80_000, "Card": 20_000])
        #expect(try replica.query.cardBills(of: card, from: (2026, 1), to: (2026, 2))?.count == 2)
        #expect(try replica.query.cardBills(of: bank, from: (2026, 1), to: (2026, 2)) == nil, "no closing day, no bills")
        await #expect(throws: ValidationError.self) { try await replica.create(TransferFields(from: bank, to: bank, amount: 1)) }

        try await replica.create(ExpenseFields(amount: 9_000, payee: "Dinner"))
        try await replica.create(SettlementFields(from: "jisoo", to: "minji", amount: 3_000))
        #expect(try replica.query.people().balances["KRW"] == ["jisoo": 3_000, "minji": -3_000])
        await #expect(throws: ValidationError.self) { try await replica.create(SettlementFields(from: "jisoo", to: "jisoo", amount: 1)) }

        try await replica.create(RateFields(currency: "USD", toCurrency: "KRW", rate: "1380", date: opened))
        try await replica.create(RuleFields(pattern: "starbucks"))
        try await replica.create(RecurringFields(cadence: .monthly, start: opened, count: .some(3), amount: 50_000))
        #expect(try replica.query.rates().count == 1 && replica.query.rules().count == 1 && replica.query.recurringRules().count == 1)
        #expect(try replica.query.monthTotals(from: "2026-01", to: "2026-03").filter { $0.kind == "expense" }.count >= 1)
    }
}
