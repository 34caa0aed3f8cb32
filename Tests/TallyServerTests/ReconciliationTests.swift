import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TallyCore
@testable import TallyServer
import TallyTestSupport

/// Reconciliation (issue 34): an account reconciled against a statement shows the difference
/// and which cleared lines were changed or added after it, never silently taking them in.
@Suite struct ReconciliationTests {
    @Test func aReconciledAccountFlagsLaterEditsOfItsClearedLines() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            func create(_ path: String, _ body: String) async throws -> String { try await client.create(path, body, token: fixture.readWrite) }
            func reconciliation(_ id: String) async throws -> [String: Any] {
                try await client.send(.get, "/v1/accounts/\(id)/reconciliation", token: fixture.readOnly).object
            }
            let bank = try await create("/v1/accounts", #"{"name": "Bank", "openingBalance": 500000, "openingDate": "2026-10-01"}"#)
            let card = try await create("/v1/accounts", #"{"name": "Card", "kind": "card", "openingDate": "2026-10-01"}"#)
            let rent = try await create("/v1/expenses", #"{"amount": 300000, "accountId": "\#(bank)", "date": "2026-10-05"}"#)
            _ = try await create("/v1/transfers", #"{"accountId": "\#(bank)", "toAccountId": "\#(card)", "amount": 50000, "date": "2026-10-20"}"#)
            _ = try await create("/v1/expenses", #"{"amount": 9000, "accountId": "\#(bank)", "date": "2026-11-02"}"#)  // after the statement
            var answer = try await reconciliation(bank)
            #expect(answer["reconciledThrough"] is NSNull && answer["difference"] is NSNull, "never reconciled: \(answer)")

            // The statement says 149,000 at the end of October: 1,000 more than the book.
            let patch = try await client.send(
                .patch, "/v1/accounts/\(bank)", token: fixture.readWrite,
                json: #"{"reconciledThrough": "2026-10-31T23:59:59+09:00", "statementBalance": 151000}"#)
            #expect(patch.status == .ok, "\(String(buffer: patch.body))")
            answer = try await reconciliation(bank)
            #expect(answer["balance"] as? Int == 150_000 && answer["difference"] as? Int == 1_000 && answer["clearedCount"] as? Int == 2, "\(answer)")
            #expect((answer["changedSince"] as? [Any])?.isEmpty == true)

            // A note added to a cleared line changes nothing that was reconciled: not flagged.
            _ = try await client.send(.patch, "/v1/expenses/\(rent)", token: fixture.readWrite, json: #"{"memo": "October"}"#)
            #expect((try await reconciliation(bank)["changedSince"] as? [Any])?.isEmpty == true)
            // A later edit of a cleared line, and a line added into the reconciled month: both flagged.
            _ = try await client.send(.patch, "/v1/expenses/\(rent)", token: fixture.readWrite, json: #"{"amount": 299000}"#)
            let late = try await create("/v1/expenses", #"{"amount": 1000, "accountId": "\#(bank)", "date": "2026-10-30"}"#)
            answer = try await reconciliation(bank)
            let changed = Set((answer["changedSince"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
            #expect(changed == [rent, late] && answer["difference"] as? Int == 1_000 && answer["clearedCount"] as? Int == 3, "\(answer)")
            // Reconciling again takes them in.
            _ = try await client.send(.patch, "/v1/accounts/\(bank)", token: fixture.readWrite, json: #"{"statementBalance": 150000}"#)
            _ = try await client.send(.patch, "/v1/accounts/\(bank)", token: fixture.readWrite, json: #"{"reconciledThrough": "2026-10-31T23:59:59+09:00"}"#)
            answer = try await reconciliation(bank)
            #expect(answer["difference"] as? Int == 0 && (answer["changedSince"] as? [Any])?.isEmpty == true, "\(answer)")

            // Hostile: no such account, not a UUID, a statement balance that is not a number.
            let missing = try await client.send(.get, "/v1/accounts/\(UUID().uuidString)/reconciliation", token: fixture.readOnly)
            #expect(missing.status == .notFound && missing.object["error"] != nil)
            let notID = try await client.send(.get, "/v1/accounts/nope/reconciliation", token: fixture.readOnly)
            #expect(notID.status == .badRequest)
            let before = fixture.service.ledger.appendedIndex
            for body in [#"{"statementBalance": "lots"}"#, #"{"statementBalance": 1e30}"#, #"{"reconciledThrough": "yesterday"}"#] {
                let bad = try await client.send(.patch, "/v1/accounts/\(bank)", token: fixture.readWrite, json: body)
                #expect(bad.status == .badRequest && bad.object["error"] != nil, "\(body): \(String(buffer: bad.body))")
            }
            #expect(fixture.service.ledger.appendedIndex == before, "nothing was written")
        }
    }
}
