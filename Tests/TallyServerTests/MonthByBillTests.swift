import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TallyCore
@testable import TallyServer
import TallyTestSupport

/// A month by bill (issue 34): a card purchase counts in the month its statement is due, the
/// rest in the month it was made; by purchase date stays the default.
@Suite struct MonthByBillTests {
    @Test func cardPurchasesCountInTheMonthTheirBillIsDue() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            func create(_ path: String, _ body: String) async throws -> String { try await client.create(path, body, token: fixture.readWrite) }
            func summary(_ query: String) async throws -> (expense: Int?, categories: [String: Int], by: String?) {
                let answer = try await client.send(.get, "/v1/summary?\(query)", token: fixture.readOnly).object
                let expense = (answer["totals"] as? [[String: Any]])?.first { $0["currency"] as? String == "KRW" }?["expense"] as? Int
                let categories = Dictionary(
                    uniqueKeysWithValues: (answer["byCategory"] as? [[String: Any]] ?? []).filter { $0["currency"] as? String == "KRW" }.map {
                        ($0["label"] as? String ?? "", $0["amount"] as? Int ?? 0)
                    })
                return (expense, categories, answer["by"] as? String)
            }
            let food = try await create("/v1/categories", #"{"name": "Food"}"#)
            let home = try await create("/v1/categories", #"{"name": "Home"}"#)
            // Closing on the 14th, paying on the 1st: March 10th is on March's statement, due
            // April 1st; March 20th on April's, due May 1st.
            let card = try await create("/v1/accounts", #"{"name": "Card", "kind": "card", "closingDay": 14, "paymentDay": 1, "openingDate": "2026-01-01"}"#)
            let bank = try await create("/v1/accounts", #"{"name": "Bank", "openingDate": "2026-01-01"}"#)
            _ = try await create("/v1/expenses", #"{"amount": 1000, "accountId": "\#(bank)", "categoryId": "\#(food)", "date": "2026-03-05T12:00:00+09:00"}"#)
            _ = try await create("/v1/expenses", #"{"amount": 20000, "accountId": "\#(card)", "categoryId": "\#(food)", "date": "2026-03-10T12:00:00+09:00"}"#)
            let late = try await create(
                "/v1/expenses", #"{"amount": 300000, "accountId": "\#(card)", "categoryId": "\#(food)", "date": "2026-03-20T12:00:00+09:00"}"#)
            let split = try await client.send(
                .put, "/v1/expenses/\(late)/lines", token: fixture.readWrite,
                json: #"{"lines": [{"categoryId": "\#(food)", "amount": 100000}, {"categoryId": "\#(home)", "amount": 200000}]}"#)
            #expect(split.status == .ok)

            // In another currency than the card's: on no bill, so by purchase date either way.
            _ = try await create("/v1/expenses", #"{"amount": 4200, "currency": "USD", "accountId": "\#(card)", "date": "2026-03-20T12:00:00+09:00"}"#)
            let dollars = try await client.send(.get, "/v1/summary?month=2026-03&by=bill", token: fixture.readOnly).object
            #expect((dollars["totals"] as? [[String: Any]])?.first { $0["currency"] as? String == "USD" }?["expense"] as? Int == 4_200, "\(dollars)")
            let byPurchase = try await summary("month=2026-03")
            #expect(byPurchase.expense == 321_000 && byPurchase.by == "purchase" && byPurchase.categories == ["Food": 121_000, "Home": 200_000])
            #expect(try await summary("month=2026-03&by=bill").expense == 1_000)
            #expect(try await summary("month=2026-04&by=bill").expense == 20_000)
            let may = try await summary("month=2026-05&by=bill")
            #expect(may.expense == 300_000 && may.by == "bill" && may.categories == ["Food": 100_000, "Home": 200_000], "the split receipt's lines come along")
            #expect(try await summary("month=2026-05").expense == nil, "nothing was bought in May")

            for query in ["month=2026-05&by=weekly", "month=2026-05&by=bill&in=USD", "month=2026-05&by="] {
                let bad = try await client.send(.get, "/v1/summary?\(query)", token: fixture.readOnly)
                #expect(bad.status == .badRequest && bad.object["error"] != nil, "\(query): \(String(buffer: bad.body))")
            }
        }
    }
}
