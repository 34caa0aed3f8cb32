import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TallyCore
@testable import TallyServer
import TallyTestSupport

/// The year in review (issue 34): a year against the year before, its busiest month, where the
/// money went (sub-categories in their parent, split lines in theirs), the largest expenses and
/// the net worth at both ends.
@Suite struct YearInReviewTests {
    @Test func aYearAgainstTheYearBefore() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            func create(_ path: String, _ body: String) async throws -> String { try await client.create(path, body, token: fixture.readWrite) }
            let food = try await create("/v1/categories", #"{"name": "Food"}"#)
            let cafe = try await create("/v1/categories", #"{"name": "Cafe", "parentId": "\#(food)"}"#)
            let rent = try await create("/v1/categories", #"{"name": "Rent"}"#)
            _ = try await create("/v1/accounts", #"{"name": "Bank", "openingBalance": 1000000, "openingDate": "2025-01-01T00:00:00Z"}"#)
            _ = try await create("/v1/expenses", #"{"amount": 50000, "categoryId": "\#(food)", "date": "2025-06-01"}"#)  // the year before
            _ = try await create("/v1/expenses", #"{"kind": "income", "amount": 3000000, "date": "2026-01-25"}"#)
            _ = try await create("/v1/expenses", #"{"amount": 700000, "categoryId": "\#(rent)", "payee": "Landlord", "date": "2026-02-01"}"#)
            _ = try await create("/v1/expenses", #"{"amount": 200000, "categoryId": "\#(cafe)", "payee": "Cafe", "date": "2026-03-03"}"#)
            let mixed = try await create("/v1/expenses", #"{"amount": 100000, "categoryId": "\#(food)", "payee": "Mart", "date": "2026-03-09"}"#)
            _ = try await client.send(
                .put, "/v1/expenses/\(mixed)/lines", token: fixture.readWrite,
                json: #"{"lines": [{"categoryId": "\#(food)", "amount": 60000}, {"categoryId": "\#(rent)", "amount": 40000}]}"#)
            _ = try await create("/v1/expenses", #"{"amount": 9, "currency": "USD", "date": "2026-07-01"}"#)
            _ = try await create("/v1/expenses", #"{"kind": "income", "amount": 500, "currency": "EUR", "date": "2026-07-01"}"#)

            let answer = try await client.send(.get, "/v1/reports/year?year=2026", token: fixture.readOnly).object
            let currencies = answer["currencies"] as? [[String: Any]] ?? []
            #expect(currencies.map { $0["currency"] as? String } == ["EUR", "KRW", "USD"], "\(answer)")
            #expect(currencies.first?["busiestMonth"] is NSNull, "nothing spent in euros: no busiest month")
            let won = currencies.count > 1 ? currencies[1] : [:]
            #expect(won["income"] as? Int == 3_000_000 && won["expense"] as? Int == 1_000_000 && won["net"] as? Int == 2_000_000 && won["count"] as? Int == 4)
            #expect((won["previous"] as? [String: Any])?["expense"] as? Int == 50_000)
            #expect((won["busiestMonth"] as? [String: Any])?["month"] as? String == "2026-02")
            #expect((won["months"] as? [Int])?.prefix(3) == [0, 700_000, 300_000])
            let top = (won["topCategories"] as? [[String: Any]] ?? []).map { "\($0["name"] ?? "")=\($0["expense"] ?? "") \($0["share"] ?? "")%" }
            #expect(top == ["Rent=740000 74.0%", "Food=260000 26.0%"], "\(top)")
            let largest = (won["largest"] as? [[String: Any]] ?? []).compactMap { $0["payee"] as? String }
            #expect(largest == ["Landlord", "Cafe", "Mart"])
            let worth = answer["netWorth"] as? [String: Any]
            #expect(((worth?["end"] as? [[String: Any]])?.first?["balance"] as? Int) == 1_000_000)

            let empty = try await client.send(.get, "/v1/reports/year?year=1999", token: fixture.readOnly).object
            #expect((empty["currencies"] as? [Any])?.isEmpty == true)
            for query in ["year=26", "year=abcd", "year=0001", "year=10000", "year=2026&month=1", "year=%EF%BC%92%EF%BC%90%EF%BC%92%EF%BC%96"] {
                let bad = try await client.send(.get, "/v1/reports/year?\(query)", token: fixture.readOnly)
                #expect(bad.status == .badRequest && bad.object["error"] != nil, "\(query): \(String(buffer: bad.body))")
            }
        }
    }
}
