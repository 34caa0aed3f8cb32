import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TallyCore
import TallyLedger
@testable import TallyServer
import TallyTestSupport

/// `?asOf=` on the API's GET routes: each answers what it answered when the views stood at
/// that log index (or moment), says which index in `Tally-As-Of-Index`, and refuses what is
/// not an index or a moment.
@Suite struct AsOfRouteTests {
    static let asOfHeader = HTTPField.Name("Tally-As-Of-Index")!

    /// Every read route, as a person would call it, with its answer now (bodies compared whole).
    static func readRoutes(expense: String, category: String) -> [String] {
        [
            "/v1/expenses?month=2026-05", "/v1/expenses/\(expense)", "/v1/categories", "/v1/categories/\(category)", "/v1/todos",
            "/v1/budgets", "/v1/budgets?month=2026-05", "/v1/recurring", "/v1/settings", "/v1/summary?month=2026-05",
            "/v1/summary/months", "/v1/audit/\(expense)", "/v1/conflicts",
        ]
    }

    @Test func everyReadRouteAnswersAsItDidAtThatIndex() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            func post(_ path: String, _ body: String) async throws -> String {
                let response = try await client.send(.post, path, token: fixture.readWrite, json: body)
                #expect(response.status == .created, "\(path): \(String(buffer: response.body))")
                return response.object["id"] as? String ?? ""
            }
            func snapshot(_ routes: [String], asOf: String? = nil) async throws -> [String: (HTTPResponse.Status, String)] {
                var answers: [String: (HTTPResponse.Status, String)] = [:]
                for route in routes {
                    let uri = asOf.map { route + (route.contains("?") ? "&" : "?") + "asOf=\($0)" } ?? route
                    let response = try await client.send(.get, uri, token: fixture.readOnly)
                    answers[route] = (response.status, String(buffer: response.body))
                    if let asOf, response.status == .ok, asOf.allSatisfy(\.isNumber) {
                        #expect(response.headers[Self.asOfHeader] == asOf, "\(uri)")
                    }
                }
                return answers
            }
            let category = try await post("/v1/categories", #"{"name": "Food"}"#)
            let expense = try await post("/v1/expenses", #"{"amount": 1000, "categoryId": "\#(category)", "date": "2026-05-03T12:00:00+09:00"}"#)
            let routes = Self.readRoutes(expense: expense, category: category)
            // Captured at each step, as the views stood then.
            var captured: [(index: UInt64, answers: [String: (HTTPResponse.Status, String)])] = []
            captured.append((try fixture.service.views.projectedIndex(), try await snapshot(routes)))
            try fixture.service.views.takeSnapshot(SnapshotPolicy(), always: true)  // later answers start from it
            _ = try await post("/v1/budgets", #"{"categoryId": "\#(category)", "amount": 5000, "fromMonth": "2026-05"}"#)
            var patch = try await client.send(.patch, "/v1/expenses/\(expense)", token: fixture.readWrite, json: #"{"amount": 2500, "memo": "after"}"#)
            #expect(patch.status == .ok)
            captured.append((try fixture.service.views.projectedIndex(), try await snapshot(routes)))
            _ = try await post("/v1/todos", #"{"title": "Walk", "isChallenge": true}"#)
            patch = try await client.send(.patch, "/v1/categories/\(category)", token: fixture.readWrite, json: #"{"name": "Groceries"}"#)
            #expect(patch.status == .ok)
            let put = try await client.send(.put, "/v1/settings/theme", token: fixture.readWrite, json: #"{"value": "dark"}"#)
            #expect(put.status == .ok || put.status == .created)
            #expect(try await client.send(.delete, "/v1/expenses/\(expense)", token: fixture.readWrite).status == .noContent)
            captured.append((try fixture.service.views.projectedIndex(), try await snapshot(routes)))

            for (index, answers) in captured {
                let past = try await snapshot(routes, asOf: String(index))
                for route in routes {
                    #expect(past[route]!.0 == answers[route]!.0, "\(route) as of \(index)")
                    #expect(past[route]!.1 == answers[route]!.1, "\(route) as of \(index)")
                }
            }
            // The answers did change over time (the comparison above is not trivially true).
            #expect(captured[0].answers["/v1/summary?month=2026-05"]!.1 != captured[1].answers["/v1/summary?month=2026-05"]!.1)
            #expect(captured[2].answers["/v1/expenses/\(expense)"]!.0 == .notFound && captured[1].answers["/v1/expenses/\(expense)"]!.0 == .ok)

            // As of index 0: the empty ledger. Past the views' index: now, and the header says which.
            let empty = try await client.send(.get, "/v1/expenses?asOf=0", token: fixture.readOnly)
            #expect(empty.status == .ok && (empty.object["items"] as? [Any])?.isEmpty == true && empty.headers[Self.asOfHeader] == "0")
            let future = try await client.send(.get, "/v1/summary?month=2026-05&asOf=99999999999", token: fixture.readOnly)
            #expect(future.headers[Self.asOfHeader] == String(captured[2].index))
            // A moment: the end of a day long ago is the empty ledger; a moment from now on is now.
            let longAgo = try await client.send(.get, "/v1/expenses?asOf=2001-01-01", token: fixture.readOnly)
            #expect(longAgo.status == .ok && longAgo.headers[Self.asOfHeader] == "0")
            let tomorrow = try await client.send(.get, "/v1/todos?asOf=2999-01-01T00:00:00Z", token: fixture.readOnly)
            #expect(tomorrow.status == .ok && tomorrow.headers[Self.asOfHeader] == String(captured[2].index))
            // Without asOf there is no header.
            #expect(try await client.send(.get, "/v1/todos", token: fixture.readOnly).headers[Self.asOfHeader] == nil)
        }
    }

    @Test func whatIsNotAnIndexOrAMomentIsRefusedNamingAsOf() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let before = try fixture.service.views.projectedIndex()
            for bad in [
                "", "-1", "1.5", "0x10", "yesterday", "2026-13-01", "2026-02-30", "2026-03-31T25:00", "2026-03-31T23:59+19:00",
                "99999999999999999999", "123456789012345678901234", "2026-03-31%00", "%E2%80%AE2026-03-31", String(repeating: "9", count: 500),
                "2026-03-31T23:59:60", "10000-01-01",
            ] {
                for route in ["/v1/expenses", "/v1/summary?month=2026-05", "/v1/budgets", "/v1/settings", "/v1/audit/theme"] {
                    let uri = route + (route.contains("?") ? "&" : "?") + "asOf=" + bad
                    let response = try await client.send(.get, uri, token: fixture.readOnly)
                    #expect(response.status == .badRequest, "\(uri): \(response.status)")
                    #expect((response.object["error"] as? [String: Any])?["field"] as? String == "asOf", "\(uri): \(String(buffer: response.body))")
                }
            }
            #expect(try fixture.service.views.projectedIndex() == before, "nothing written")
            // asOf is a read: a write route does not take it as a filter (it is an unknown parameter nowhere else).
            let list = try await client.send(.get, "/v1/expenses?asOf=0&bogus=1", token: fixture.readOnly)
            #expect(list.status == .badRequest)
        }
    }

    @Test func manyAsOfReadsAtOnceWaitTheirTurnOrAreToldToRetryNeverFail() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            for amount in 1...30 {
                let response = try await client.send(
                    .post, "/v1/expenses", token: fixture.readWrite, json: #"{"amount": \#(amount), "date": "2026-05-03T12:00:00+09:00"}"#)
                #expect(response.status == .created)
            }
            try fixture.service.views.takeSnapshot(SnapshotPolicy(), always: true)
            let statuses = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String).self) { group in
                for index in 0..<40 {
                    group.addTask {
                        let response = try await client.send(.get, "/v1/summary?month=2026-05&asOf=\(index % 31)", token: fixture.readOnly)
                        return (response.status, String(buffer: response.body))
                    }
                }
                var all: [(HTTPResponse.Status, String)] = []
                for try await answer in group { all.append(answer) }
                return all
            }
            #expect(statuses.allSatisfy { $0.0 == .ok || ($0.0 == .serviceUnavailable && $0.1.contains("as_of_busy")) }, "\(statuses.filter { $0.0 != .ok })")
            #expect(statuses.filter { $0.0 == .ok }.count >= 17, "one running and sixteen waiting are always answered")
        }
    }
}
