import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TallyCore
@testable import TallyServer
import TallyTestSupport

/// Who paid and who owes (issue 34): equally, by shares, by amounts; settling; and refusals.
@Suite struct PeopleTests {
    func post(_ client: some TestClientProtocol, _ fixture: ServerFixture, _ path: String, _ body: String) async throws {
        let response = try await client.send(.post, path, token: fixture.readWrite, json: body)
        #expect(response.status == .created, "\(path) \(body): \(String(buffer: response.body))")
    }

    func people(_ client: some TestClientProtocol, _ fixture: ServerFixture) async throws -> [String: Any] {
        try await client.send(.get, "/v1/people", token: fixture.readOnly).object
    }

    @Test func whoPaidWhoOwesAndTheFewestTransfersThatSettleIt() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            try await post(
                client, fixture, "/v1/expenses", #"{"amount": 120000, "paidBy": "minji", "split": "equal", "shares": {"minji": 1, "jisoo": 1, "hana": 1}}"#)
            try await post(client, fixture, "/v1/expenses", #"{"amount": 30000, "paidBy": "jisoo", "split": "shares", "shares": {"jisoo": 1, "hana": 2}}"#)
            try await post(
                client, fixture, "/v1/expenses", #"{"amount": 10000, "paidBy": "hana", "split": "amounts", "shares": {"minji": 7000, "hana": 3000}}"#)
            // Parts that do not add up; and one shared with nobody, which owes nothing.
            try await post(client, fixture, "/v1/expenses", #"{"amount": 5000, "paidBy": "hana", "split": "amounts", "shares": {"minji": 7000}}"#)
            try await post(client, fixture, "/v1/expenses", #"{"amount": 999, "paidBy": "minji"}"#)
            var answer = try await people(client, fixture)
            let balances = Dictionary(
                uniqueKeysWithValues: (answer["items"] as? [[String: Any]] ?? []).map { ($0["name"] as? String ?? "", $0["balance"] as? Int ?? 0) })
            // minji: +120000 − 40000 − 7000; jisoo: −40000 + 30000 − 10000; hana: −40000 − 20000 + 10000 − 3000
            #expect(balances == ["minji": 73000, "jisoo": -20000, "hana": -53000], "\(answer)")
            let settle = (answer["settle"] as? [[String: Any]] ?? []).map { "\($0["from"] ?? "") → \($0["to"] ?? ""): \($0["amount"] ?? "")" }
            #expect(settle == ["hana → minji: 53000", "jisoo → minji: 20000"])
            #expect((answer["needsAttention"] as? [String])?.count == 1)

            try await post(client, fixture, "/v1/settlements", #"{"paidBy": "hana", "paidTo": "minji", "amount": 53000}"#)
            try await post(client, fixture, "/v1/settlements", #"{"paidBy": "jisoo", "paidTo": "minji", "amount": 20000}"#)
            answer = try await people(client, fixture)
            #expect((answer["items"] as? [[String: Any]] ?? []).allSatisfy { $0["balance"] as? Int == 0 } && (answer["settle"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func refusalsAreClearAndWriteNothing() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let before = fixture.service.ledger.appendedIndex
            let cases: [(String, String, HTTPResponse.Status)] = [
                ("/v1/expenses", #"{"amount": 1000, "paidBy": "a", "shares": {"a": 0, "b": 0}}"#, .badRequest),
                ("/v1/expenses", #"{"amount": 1000, "paidBy": "a", "shares": {}}"#, .badRequest),
                ("/v1/expenses", #"{"amount": 1000, "paidBy": "a", "shares": ["a", "b"]}"#, .badRequest),
                ("/v1/expenses", #"{"amount": 1000, "paidBy": "a", "split": "halves", "shares": {"a": 1}}"#, .badRequest),
                ("/v1/expenses", #"{"amount": 1000, "paidBy": "", "shares": {"a": 1}}"#, .badRequest),
                ("/v1/settlements", #"{"paidBy": "a", "paidTo": "a", "amount": 5}"#, .conflict),
                ("/v1/settlements", #"{"paidBy": "a", "paidTo": "b", "amount": 0}"#, .badRequest),
            ]
            for (path, body, status) in cases {
                let response = try await client.send(.post, path, token: fixture.readWrite, json: body)
                #expect(response.status == status, "\(body): \(String(buffer: response.body))")
            }
            #expect(fixture.service.ledger.appendedIndex == before, "nothing was written")
        }
    }
}
