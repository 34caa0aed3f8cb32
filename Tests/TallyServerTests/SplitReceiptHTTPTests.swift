import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TallyCore
@testable import TallyServer
import TallyTestSupport

/// Split receipts over HTTP (issue 34): a payment split into lines of several categories
/// counts in each, in the month's summary, its budgets and the 12-month report; refusals
/// write nothing.
@Suite struct SplitReceiptHTTPTests {
    func create(_ client: some TestClientProtocol, _ fixture: ServerFixture, _ path: String, _ body: String) async throws -> String {
        try await client.create(path, body, token: fixture.readWrite)
    }

    @Test func aSplitReceiptCountsEachLineInItsCategory() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let groceries = try await create(client, fixture, "/v1/categories", #"{"name": "Groceries"}"#)
            let household = try await create(client, fixture, "/v1/categories", #"{"name": "Household"}"#)
            _ = try await create(client, fixture, "/v1/budgets", #"{"categoryId": "\#(household)", "amount": 50000, "fromMonth": "2026-11"}"#)
            let expense = try await create(
                client, fixture, "/v1/expenses", #"{"amount": 120000, "categoryId": "\#(groceries)", "payee": "E-Mart", "date": "2026-11-20"}"#)
            let split = try await client.send(
                .put, "/v1/expenses/\(expense)/lines", token: fixture.readWrite,
                json: #"{"lines": [{"categoryId": "\#(groceries)", "amount": 80000}, {"categoryId": "\#(household)", "amount": 40000, "memo": "detergent"}]}"#)
            #expect(split.status == .ok, "\(String(buffer: split.body))")
            var receipt = split.object
            #expect(receipt["assigned"] as? Int == 120_000 && receipt["needsAttention"] as? Bool == false)
            let lines = receipt["lines"] as? [[String: Any]] ?? []
            #expect(lines.map { $0["amount"] as? Int } == [80_000, 40_000] && lines[1]["memo"] as? String == "detergent")

            let summary = try await client.send(.get, "/v1/summary?month=2026-11", token: fixture.readOnly).object
            let byCategory = Dictionary(
                uniqueKeysWithValues: (summary["byCategory"] as? [[String: Any]] ?? []).map { ($0["label"] as? String ?? "", $0["amount"] as? Int ?? 0) })
            #expect(byCategory == ["Groceries": 80_000, "Household": 40_000], "\(summary)")
            let totals = summary["totals"] as? [[String: Any]] ?? []
            #expect(totals.first?["expense"] as? Int == 120_000 && totals.first?["count"] as? Int == 1, "a split is still one payment")
            let budgets = try await client.send(.get, "/v1/budgets?month=2026-11", token: fixture.readOnly).object
            #expect((budgets["items"] as? [[String: Any]])?.first?["spent"] as? Int == 40_000, "\(budgets)")
            let report = try await client.send(.get, "/v1/reports/months?to=2026-11&months=1", token: fixture.readOnly).object
            let reported = Dictionary(
                uniqueKeysWithValues: (report["categories"] as? [[String: Any]] ?? []).map {
                    ($0["name"] as? String ?? "", ($0["expense"] as? [Int])?.first ?? 0)
                })
            #expect(reported == ["Groceries": 80_000, "Household": 40_000], "\(report)")

            // Re-split keeping the first line (by id): it is changed, the second deleted, a third added.
            let keep = lines[0]["id"] as? String ?? ""
            let resplit = try await client.send(
                .put, "/v1/expenses/\(expense)/lines", token: fixture.readWrite,
                json: #"{"lines": [{"id": "\#(keep)", "categoryId": "\#(groceries)", "amount": 100000}, {"amount": 20000}]}"#)
            receipt = resplit.object
            // The kept line keeps its id; the other is new (the deleted one's id is gone).
            let ids = (receipt["lines"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
            #expect(ids.count == 2 && ids.first == keep && ids.last != lines[1]["id"] as? String, "\(receipt)")
            #expect((receipt["lines"] as? [[String: Any]])?.count == 2 && receipt["needsAttention"] as? Bool == false, "\(receipt)")
            // A re-split is a later edit of the lines it keeps, not a conflict with them.
            let conflicts = try await client.send(.get, "/v1/conflicts", token: fixture.readOnly).object
            #expect((conflicts["items"] as? [Any])?.isEmpty == true, "\(conflicts)")

            // A line edited on its own no longer adds up: the receipt needs attention, listed first.
            _ = try await client.send(.patch, "/v1/lines/\(keep)", token: fixture.readWrite, json: #"{"amount": 90000}"#)
            let splits = try await client.send(.get, "/v1/splits", token: fixture.readOnly).object
            let first = (splits["receipts"] as? [[String: Any]])?.first
            #expect(first?["expenseId"] as? String == expense && first?["needsAttention"] as? Bool == true && first?["unassigned"] as? Int == 10_000)

            // No lines: not split any more.
            let unsplit = try await client.send(.put, "/v1/expenses/\(expense)/lines", token: fixture.readWrite, json: #"{"lines": []}"#).object
            #expect((unsplit["lines"] as? [Any])?.isEmpty == true && unsplit["needsAttention"] as? Bool == false)
        }
    }

    @Test func refusalsAreClearAndWriteNothing() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let expense = try await create(client, fixture, "/v1/expenses", #"{"amount": 10000}"#)
            let deleted = try await create(client, fixture, "/v1/expenses", #"{"amount": 5000}"#)
            _ = try await client.send(.delete, "/v1/expenses/\(deleted)", token: fixture.readWrite)
            let other = try await create(client, fixture, "/v1/expenses", #"{"amount": 3000}"#)
            let otherLine = try await client.send(.put, "/v1/expenses/\(other)/lines", token: fixture.readWrite, json: #"{"lines": [{"amount": 3000}]}"#)
            let otherLineID = ((otherLine.object["lines"] as? [[String: Any]])?.first?["id"] as? String) ?? ""
            let before = fixture.service.ledger.appendedIndex
            let lines = "/v1/expenses/\(expense)/lines"
            let cases: [(HTTPRequest.Method, String, String, HTTPResponse.Status)] = [
                (.put, lines, #"{"lines": [{"amount": 6000}, {"amount": 3000}]}"#, .badRequest),  // 9,000 is not 10,000
                (.put, lines, #"{"lines": [{"amount": 10000}, {"amount": 0}]}"#, .badRequest),
                (.put, lines, #"{"lines": [{"amount": -5000}, {"amount": 15000}]}"#, .badRequest),
                (.put, lines, #"{"lines": [{"amount": 9223372036854775807}, {"amount": 9223372036854775807}]}"#, .badRequest),
                (.put, lines, #"{"lines": [{"amount": 10000, "expenseId": "\#(other)"}]}"#, .badRequest),
                (.put, lines, #"{"lines": [{"amount": 10000, "categoryId": "not-a-uuid"}]}"#, .badRequest),
                (.put, lines, #"{"lines": [{"amount": 10000, "categoryId": "\#(UUID().uuidString)"}]}"#, .conflict),
                (.put, lines, #"{"lines": [{"id": "\#(otherLineID)", "amount": 10000}]}"#, .conflict),  // another expense's line
                (.put, lines, #"{"lines": [{"amount": 10000, "colour": "red"}]}"#, .badRequest),
                (.put, lines, #"{"lines": {"amount": 10000}}"#, .badRequest),
                (.put, lines, #"{"lines": [], "more": 1}"#, .badRequest),
                (.put, lines, "{\"lines\": [" + Array(repeating: #"{"amount": 1}"#, count: 101).joined(separator: ",") + "]}", .badRequest),
                (.put, "/v1/expenses/\(deleted)/lines", #"{"lines": [{"amount": 5000}]}"#, .notFound),  // a split line on a deleted payment
                (.put, "/v1/expenses/\(UUID().uuidString)/lines", #"{"lines": []}"#, .notFound),
                (.put, "/v1/expenses/nope/lines", #"{"lines": []}"#, .badRequest),
                (.post, "/v1/lines", #"{"expenseId": "\#(deleted)", "amount": 100}"#, .conflict),
                (.post, "/v1/lines", #"{"amount": 100}"#, .badRequest),
                (.patch, "/v1/lines/\(otherLineID)", #"{"expenseId": "\#(expense)"}"#, .conflict),  // a line stays with its expense
            ]
            for (method, path, body, status) in cases {
                let response = try await client.send(method, path, token: fixture.readWrite, json: body)
                #expect(response.status == status, "\(method) \(path) \(body.prefix(120)): \(String(buffer: response.body))")
                #expect(response.object["error"] != nil, "a JSON error body")
            }
            #expect(fixture.service.ledger.appendedIndex == before, "nothing was written")
            let readOnly = try await client.send(.put, lines, token: fixture.readOnly, json: #"{"lines": []}"#)
            #expect(readOnly.status == .forbidden)
        }
    }

    @Test func twoSplitsAtOnceLeaveOneThatAddsUpAndALineHasRoomForAHundred() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let expense = try await create(client, fixture, "/v1/expenses", #"{"amount": 120000}"#)
            let body = #"{"lines": [{"amount": 80000, "memo": "food"}, {"amount": 40000, "memo": "soap"}]}"#
            async let first = client.send(.put, "/v1/expenses/\(expense)/lines", token: fixture.readWrite, json: body)
            async let second = client.send(.put, "/v1/expenses/\(expense)/lines", token: fixture.readWrite, json: body)
            let statuses = [try await first.status, try await second.status]
            #expect(statuses.contains(.ok) && statuses.allSatisfy { $0 == .ok || $0 == .conflict }, "\(statuses)")
            let receipt = try await client.send(.get, "/v1/expenses/\(expense)/lines", token: fixture.readOnly).object
            #expect((receipt["lines"] as? [Any])?.count == 2 && receipt["needsAttention"] as? Bool == false, "\(receipt)")

            // A hundred lines, then one more on its own: refused.
            let many = try await create(client, fixture, "/v1/expenses", #"{"amount": 100}"#)
            let hundred = "{\"lines\": [" + Array(repeating: #"{"amount": 1}"#, count: 100).joined(separator: ",") + "]}"
            #expect(try await client.send(.put, "/v1/expenses/\(many)/lines", token: fixture.readWrite, json: hundred).status == .ok)
            let before = fixture.service.ledger.appendedIndex
            let extra = try await client.send(.post, "/v1/lines", token: fixture.readWrite, json: #"{"expenseId": "\#(many)", "amount": 1}"#)
            #expect(extra.status == .conflict && extra.object["error"] != nil, "\(String(buffer: extra.body))")
            #expect(fixture.service.ledger.appendedIndex == before)
        }
    }
}
