import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TallyCore
import TallyLog
@testable import TallyServer
import TallySync
import TallyTestSupport

/// Budgets (issue 18): set for a month or from a month on, sub-categories' spending counted
/// toward their parent's budget, in the summary, through category merges on two replicas, and
/// refused when they make no sense.
@Suite struct BudgetTests {
    func post(_ client: some TestClientProtocol, _ fixture: ServerFixture, _ path: String, _ body: String) async throws -> [String: Any] {
        let response = try await client.send(.post, path, token: fixture.readWrite, json: body)
        #expect(response.status == .created, "\(path) \(body): \(String(buffer: response.body))")
        return response.object
    }

    @Test func aBudgetAppliesFromItsMonthUntilALaterOneTakesOver() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            _ = try await post(client, fixture, "/v1/budgets", #"{"amount": 500000, "fromMonth": "2026-01"}"#)
            _ = try await post(client, fixture, "/v1/budgets", #"{"amount": 600000, "fromMonth": "2026-03", "toMonth": "2026-03"}"#)
            _ = try await post(client, fixture, "/v1/budgets", #"{"amount": 550000, "fromMonth": "2026-05"}"#)
            _ = try await post(client, fixture, "/v1/budgets", #"{"amount": 100, "currency": "USD", "fromMonth": "2026-02", "toMonth": "2026-04"}"#)
            for (month, expected) in [
                ("2025-12", [:]), ("2026-01", ["KRW": 500_000]), ("2026-03", ["KRW": 600_000, "USD": 100]),
                ("2026-04", ["KRW": 500_000, "USD": 100]), ("2026-05", ["KRW": 550_000]), ("2027-12", ["KRW": 550_000]),
            ] as [(String, [String: Int])] {
                let response = try await client.send(.get, "/v1/budgets?month=\(month)", token: fixture.readOnly)
                let items = response.object["items"] as? [[String: Any]] ?? []
                let got = Dictionary(uniqueKeysWithValues: items.map { ($0["currency"] as? String ?? "", $0["budgeted"] as? Int ?? -1) })
                #expect(got == expected, "\(month)")
            }
            let all = try await client.send(.get, "/v1/budgets", token: fixture.readOnly)
            #expect((all.object["items"] as? [Any])?.count == 4)
        }
    }

    @Test func subCategorySpendingCountsTowardItsParentsBudgetInTheSummary() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let food = try await post(client, fixture, "/v1/categories", #"{"name": "Food"}"#)["id"] as? String ?? ""
            let lunch = try await post(client, fixture, "/v1/categories", #"{"name": "Lunch", "parentId": "\#(food)"}"#)["id"] as? String ?? ""
            let bus = try await post(client, fixture, "/v1/categories", #"{"name": "Bus"}"#)["id"] as? String ?? ""
            let budget = try await post(client, fixture, "/v1/budgets", #"{"categoryId": "\#(food)", "amount": 50000, "fromMonth": "2026-05"}"#)
            _ = try await post(client, fixture, "/v1/budgets", #"{"categoryId": "\#(bus)", "amount": 10000, "fromMonth": "2026-05"}"#)
            for (amount, category, date) in [
                (30_000, lunch, "2026-05-03"), (25_000, food, "2026-05-09"), (4_000, bus, "2026-05-10"),
                (99_000, food, "2026-06-01"), (7_000, lunch, "2026-04-30"),
            ] {
                _ = try await post(client, fixture, "/v1/expenses", #"{"amount": \#(amount), "categoryId": "\#(category)", "date": "\#(date)T12:00:00+09:00"}"#)
            }
            _ = try await post(
                client, fixture, "/v1/expenses", #"{"kind": "income", "amount": 1000000, "categoryId": "\#(food)", "date": "2026-05-02T12:00:00+09:00"}"#)
            let summary = try await client.send(.get, "/v1/summary?month=2026-05", token: fixture.readOnly)
            let budgets = Dictionary(
                uniqueKeysWithValues: (summary.object["budgets"] as? [[String: Any]] ?? []).map { ($0["categoryName"] as? String ?? "", $0) })
            #expect(budgets["Food"]?["spent"] as? Int == 55_000, "Lunch's 30,000 + Food's 25,000; income and other months not counted")
            #expect(budgets["Food"]?["remaining"] as? Int == -5_000 && budgets["Food"]?["over"] as? Bool == true)
            #expect(budgets["Bus"]?["spent"] as? Int == 4_000 && budgets["Bus"]?["remaining"] as? Int == 6_000 && budgets["Bus"]?["over"] as? Bool == false)
            // Budgets are events like everything else: they have an audit trail.
            let trail = try await client.send(.get, "/v1/audit/\(budget["id"] as? String ?? "")", token: fixture.readOnly)
            #expect((trail.object["events"] as? [Any])?.count == 1)
        }
    }

    @Test func aMergedCategorysBudgetMovesToItsWinnerAndACollisionResolvesTheSameOnBothReplicas() async throws {
        let home = try ServerFixture(), away = try ServerFixture()
        let homeFood = UUID(), awayFood = UUID(), homeLunch = UUID()
        let ledgerA = home.service.ledger, ledgerB = away.service.ledger
        _ = try await ledgerA.create(.category, id: homeFood, [.name: .string("Food")], actor: "t")
        _ = try await ledgerA.create(.category, id: homeLunch, [.name: .string("Lunch"), .parentId: .uuid(homeFood)], actor: "t")
        _ = try await ledgerB.create(.category, id: awayFood, [.name: .string("food")], actor: "t")
        _ = try await ledgerA.create(.budget, [.categoryId: .uuid(homeFood), .amount: .int(100_000), .fromMonth: .string("2026-05")], actor: "t")
        _ = try await ledgerB.create(.budget, [.categoryId: .uuid(awayFood), .amount: .int(80_000), .fromMonth: .string("2026-05")], actor: "t")
        let may = DateTime(iso8601: "2026-05-04T12:00:00+09:00")!
        _ = try await ledgerA.create(.expense, [.amount: .int(30_000), .categoryId: .uuid(homeLunch), .date: .dateTime(may)], actor: "t")
        _ = try await ledgerB.create(.expense, [.amount: .int(5_000), .categoryId: .uuid(awayFood), .date: .dateTime(may)], actor: "t")
        try await home.exchangeBundles(with: away)
        let answers = Answers()
        for fixture in [home, away] {
            try await fixture.test { client in
                let categories = try await client.send(.get, "/v1/categories", token: fixture.readOnly)
                let winner = ((categories.object["items"] as? [[String: Any]] ?? []).first { $0["depth"] as? Int == 0 })?["id"] as? String
                let response = try await client.send(.get, "/v1/budgets?month=2026-05", token: fixture.readOnly)
                let items = response.object["items"] as? [[String: Any]] ?? []
                #expect(items.count == 1, "the two budgets collide under the one category")
                #expect(items.first?["categoryId"] as? String == winner)
                #expect(items.first?["spent"] as? Int == 35_000, "both replicas' spending under the winner")
                // The winner's own budget wins the collision.
                let expected = winner == homeFood.lowercased ? 100_000 : 80_000
                #expect(items.first?["budgeted"] as? Int == expected)
                let all = try await client.send(.get, "/v1/budgets", token: fixture.readOnly)
                let moved = (all.object["items"] as? [[String: Any]] ?? []).filter { $0["writtenForCategoryId"] != nil }
                #expect(
                    moved.count == 1 && moved.first?["categoryId"] as? String == winner,
                    "the loser's budget shows under the winner, saying what it was written for")
                answers.add(String(buffer: response.body))
            }
        }
        #expect(answers.values.count == 2 && answers.values[0] == answers.values[1], "identical on both replicas")
    }

    @Test func budgetsThatMakeNoSenseAreRefusedAndChangeNothing() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let cases: [(String, HTTPResponse.Status, String)] = [
                (#"{"amount": 100, "fromMonth": "2026-13"}"#, .badRequest, "fromMonth"),
                (#"{"amount": 100, "fromMonth": "0000-01"}"#, .badRequest, "fromMonth"),
                (#"{"amount": 100, "fromMonth": "2026-5"}"#, .badRequest, "fromMonth"),
                (#"{"amount": 100, "fromMonth": 202605}"#, .badRequest, "fromMonth"),
                (#"{"amount": 100, "fromMonth": "2026-05", "toMonth": "2026-04"}"#, .conflict, "toMonth"),
                (#"{"amount": 0, "fromMonth": "2026-05"}"#, .badRequest, "amount"),
                (#"{"fromMonth": "2026-05"}"#, .badRequest, "amount"),
                (#"{"amount": 100, "categoryId": "8b1a9953-c461-4b3e-9f5c-1d6a3b1e2f00"}"#, .conflict, "categoryId"),
                (#"{"amount": 100, "currency": "XXX"}"#, .badRequest, "currency"),
                (#"{"amount": 100, "title": "x"}"#, .badRequest, "title"),
            ]
            for (body, status, field) in cases {
                let response = try await client.send(.post, "/v1/budgets", token: fixture.readWrite, json: body)
                #expect(response.status == status, "\(body): \(String(buffer: response.body))")
                #expect((response.object["error"] as? [String: Any])?["field"] as? String == field, "\(body)")
            }
            let created = try await post(client, fixture, "/v1/budgets", #"{"amount": 100, "fromMonth": "2026-05"}"#)
            let patch = try await client.send(
                .patch, "/v1/budgets/\(created["id"] as? String ?? "")", token: fixture.readWrite, json: #"{"toMonth": "2026-01"}"#)
            #expect(patch.status == .conflict, "a last month before the stored first month")
            for query in ["?month=2026-00", "?month=", "?monthh=2026-01", "?month=2026-05&x=1", "?month=0000-01"] {
                #expect(try await client.send(.get, "/v1/budgets\(query)", token: fixture.readOnly).status == .badRequest, "\(query)")
            }
            let all = try await client.send(.get, "/v1/budgets", token: fixture.readOnly)
            #expect((all.object["items"] as? [[String: Any]])?.map { $0["toMonth"] is NSNull } == [true], "one budget, unchanged")
        }
    }

    @Test func aBudgetEventOfAnOlderSchemaVersionIsOutOfRule() throws {
        let event = Event(
            schemaVersion: 2, origin: ReplicaID.random(), sequence: 1, timestamp: HybridTimestamp(millis: 1, counter: 0), actor: "peer",
            entityType: .budget, entityID: .uuid(UUID()), operation: .delete, properties: [:], previousHash: .zero)
        #expect(throws: ValidationError.self) { try EntitySchema.checkIncoming(event) }
        var current = event
        current.schemaVersion = 3
        #expect(throws: Never.self) { try EntitySchema.checkIncoming(current) }
    }
}

/// Answers collected from inside test-client closures.
final class Answers: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [String] = []
    func add(_ value: String) { lock.withLock { collected.append(value) } }
    var values: [String] { lock.withLock { collected } }
}

extension ServerFixture {
    /// Carries what each replica lacks to the other as bundles (this one's first), as two
    /// replicas that were apart do.
    func exchangeBundles(with other: ServerFixture) async throws {
        for (from, to) in [(self, other), (other, self)] {
            let folder = folder.file("bundle-\(UUID().uuidString.prefix(8))")
            _ = try SegmentBundle.export(from.service.directory, to: folder, for: VersionVector(of: to.service.directory))
            _ = try await to.service.ledger.importBundle(from: folder)
        }
    }
}
