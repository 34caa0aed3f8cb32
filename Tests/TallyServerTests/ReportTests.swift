import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TallyCore
import TallyLog
@testable import TallyServer
import TallyTestSupport

/// The 12-month report (issue 34): spending per top-level category per month (a sub-category's
/// in its parent's), income against spending, the net worth at each month's end; transfers in
/// none of it; bad parameters a 400.
@Suite struct ReportTests {
    func post(_ client: some TestClientProtocol, _ fixture: ServerFixture, _ path: String, _ body: String) async throws -> String {
        let response = try await client.send(.post, path, token: fixture.readWrite, json: body)
        #expect(response.status == .created, "\(path) \(body): \(String(buffer: response.body))")
        return response.object["id"] as? String ?? ""
    }

    @Test func monthsCategoriesTrendAndNetWorth() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let food = try await post(client, fixture, "/v1/categories", #"{"name": "Food"}"#)
            let lunch = try await post(client, fixture, "/v1/categories", #"{"name": "Lunch", "parentId": "\#(food)"}"#)
            let home = try await post(client, fixture, "/v1/categories", #"{"name": "Home"}"#)
            let bank = try await post(client, fixture, "/v1/accounts", #"{"name": "Bank", "openingBalance": 500000, "openingDate": "2025-12-01T00:00:00Z"}"#)
            let cash = try await post(client, fixture, "/v1/accounts", #"{"name": "Cash", "kind": "cash", "openingDate": "2025-12-01T00:00:00Z"}"#)
            for (amount, category, day) in [
                (9000, lunch, "2026-01-10"), (21000, food, "2026-01-20"), (700000, home, "2026-02-01"), (12000, lunch, "2026-03-05"),
            ] {
                _ = try await post(
                    client, fixture, "/v1/expenses",
                    #"{"amount": \#(amount), "categoryId": "\#(category)", "accountId": "\#(bank)", "date": "\#(day)T12:00:00Z"}"#)
            }
            _ = try await post(
                client, fixture, "/v1/expenses", #"{"kind": "income", "amount": 3000000, "accountId": "\#(bank)", "date": "2026-02-25T12:00:00Z"}"#)
            _ = try await post(
                client, fixture, "/v1/transfers", #"{"accountId": "\#(bank)", "toAccountId": "\#(cash)", "amount": 100000, "date": "2026-03-02T12:00:00Z"}"#)

            let response = try await client.send(.get, "/v1/reports/months?to=2026-03&months=3", token: fixture.readOnly)
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            #expect(response.object["months"] as? [String] == ["2026-01", "2026-02", "2026-03"])
            let categories = response.object["categories"] as? [[String: Any]] ?? []
            let spending = Dictionary(uniqueKeysWithValues: categories.map { ($0["name"] as? String ?? "-", $0["expense"] as? [Int] ?? []) })
            #expect(spending == ["Food": [30000, 0, 12000], "Home": [0, 700000, 0]], "lunch counts in Food; \(categories)")
            let trend = (response.object["trend"] as? [[String: Any]])?.first
            #expect(trend?["income"] as? [Int] == [0, 3000000, 0] && trend?["expense"] as? [Int] == [30000, 700000, 12000])
            #expect(trend?["net"] as? [Int] == [-30000, 2300000, -12000], "the transfer is not spending")
            let worth = (response.object["netWorth"] as? [[String: Any]] ?? []).map { (($0["totals"] as? [[String: Any]])?.first?["balance"] as? Int) ?? -1 }
            #expect(worth == [470000, 2770000, 2758000], "the transfer moves money, the total stays")

            for query in ["?months=0", "?months=121", "?to=2026-13", "?to=yesterday", "?months=x", "?window=3", "?to=0001-01"] {
                let refused = try await client.send(.get, "/v1/reports/months" + query, token: fixture.readOnly)
                #expect(refused.status == .badRequest, "\(query): \(String(buffer: refused.body))")
            }
        }
    }
}
