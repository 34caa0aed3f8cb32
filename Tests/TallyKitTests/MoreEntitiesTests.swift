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

        try await replica.create(
            ExpenseFields(amount: 9_000, payee: "Dinner", paidBy: .some("minji"), split: .some(.equal), shares: .some(["minji": 1, "jisoo": 1, "hana": 1])))
        try await replica.create(SettlementFields(from: "jisoo", to: "minji", amount: 3_000))
        #expect(try replica.query.people().balances["KRW"] == ["jisoo": 0, "minji": 3_000, "hana": -3_000])
        await #expect(throws: ValidationError.self) { try await replica.create(SettlementFields(from: "jisoo", to: "jisoo", amount: 1)) }

        try await replica.create(RateFields(currency: "USD", toCurrency: "KRW", rate: "1380", date: opened))
        try await replica.create(RuleFields(pattern: "starbucks"))
        try await replica.create(RecurringFields(cadence: .monthly, start: opened, count: .some(3), amount: 50_000))
        #expect(try replica.query.rates().count == 1 && replica.query.rules().count == 1 && replica.query.recurringRules().count == 1)
        #expect(try replica.query.monthTotals(from: "2026-01", to: "2026-03").filter { $0.kind == "expense" }.count >= 1)
    }

    @Test func aSplitReceiptAndAReconciliationThroughTheKit() async throws {
        let folder = TemporaryDirectory("kit")
        let replica = try await Replica.open(at: folder.file("ledger"), actor: "minji")
        let food = try await replica.create(CategoryFields(name: "Food"))
        let home = try await replica.create(CategoryFields(name: "Home"))
        let day = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01
        let bank = try await replica.create(AccountFields(name: "Bank", openingBalance: 200_000, openingDate: day))
        let receipt = try await replica.create(ExpenseFields(amount: 120_000, date: day.addingTimeInterval(86_400), accountId: .some(bank)))
        try await replica.setLines(of: receipt, [.init(categoryId: food, amount: 80_000), .init(categoryId: home, amount: 40_000, memo: "soap")])
        #expect(try replica.query.splitReceipt(of: receipt).member("needsAttention") == .bool(false))
        await #expect(throws: ValidationError.self) { try await replica.setLines(of: receipt, [.init(categoryId: food, amount: 1)]) }
        let totals = Dictionary(
            uniqueKeysWithValues: try replica.query.monthTotals(from: "2026-01", to: "2026-01").map { ($0.categoryId ?? "", $0.total.value ?? 0) })
        #expect(totals == [food.lowercased: 80_000, home.lowercased: 40_000, "": 0], "each line in its category; the payment, all of it split, counted once")

        try await replica.update(bank, AccountFields(reconciledThrough: .some(day.addingTimeInterval(2 * 86_400)), statementBalance: .some(80_000)))
        let reconciliation = try #require(try replica.query.reconciliation(of: bank))
        #expect(reconciliation.balance.value == 80_000 && reconciliation.difference?.value == 0 && reconciliation.clearedCount == 1)
        #expect(reconciliation.changedSince.isEmpty)
    }
}
