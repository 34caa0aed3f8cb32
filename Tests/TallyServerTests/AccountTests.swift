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

/// Accounts and transfers (issue 34): balances at any moment, transfers that are not spending,
/// the net worth in one currency, and every refusal a clear 4xx that writes nothing.
@Suite struct AccountTests {
    func post(_ client: some TestClientProtocol, _ fixture: ServerFixture, _ path: String, _ body: String) async throws -> String {
        let response = try await client.send(.post, path, token: fixture.readWrite, json: body)
        #expect(response.status == .created, "\(path) \(body): \(String(buffer: response.body))")
        return response.object["id"] as? String ?? ""
    }

    func balances(_ client: some TestClientProtocol, _ fixture: ServerFixture, _ query: String) async throws -> (items: [String: Int], object: [String: Any]) {
        let response = try await client.send(.get, "/v1/balances" + query, token: fixture.readOnly)
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        let items = response.object["items"] as? [[String: Any]] ?? []
        return (Dictionary(uniqueKeysWithValues: items.map { ($0["name"] as? String ?? "", $0["balance"] as? Int ?? .min) }), response.object)
    }

    @Test func balancesFollowOpeningIncomesExpensesAndTransfersAtEveryMoment() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let bank = try await post(
                client, fixture, "/v1/accounts", #"{"name": "Shinhan", "openingBalance": 1000000, "openingDate": "2026-03-01T00:00:00+09:00"}"#)
            let card = try await post(
                client, fixture, "/v1/accounts", #"{"name": "Hyundai card", "kind": "card", "openingDate": "2026-03-01T00:00:00+09:00"}"#)
            let dollars = try await post(
                client, fixture, "/v1/accounts",
                #"{"name": "Travel USD", "kind": "cash", "currency": "USD", "openingBalance": 10000, "openingDate": "2026-03-01T00:00:00+09:00"}"#)
            _ = try await post(
                client, fixture, "/v1/expenses", #"{"kind": "income", "amount": 3000000, "accountId": "\#(bank)", "date": "2026-03-10T09:00:00+09:00"}"#)
            _ = try await post(client, fixture, "/v1/expenses", #"{"amount": 48000, "accountId": "\#(card)", "date": "2026-03-12T19:00:00+09:00"}"#)
            _ = try await post(
                client, fixture, "/v1/expenses", #"{"amount": 2500, "currency": "USD", "accountId": "\#(card)", "date": "2026-03-13T19:00:00+09:00"}"#)
            _ = try await post(
                client, fixture, "/v1/transfers", #"{"accountId": "\#(bank)", "toAccountId": "\#(card)", "amount": 48000, "date": "2026-04-01T09:00:00+09:00"}"#
            )
            _ = try await post(
                client, fixture, "/v1/transfers",
                #"{"accountId": "\#(bank)", "toAccountId": "\#(dollars)", "amount": 138000, "toAmount": 10000, "date": "2026-04-02T09:00:00+09:00"}"#)

            let march = try await balances(client, fixture, "?at=2026-03-31")
            #expect(march.items == ["Shinhan": 4_000_000, "Hyundai card": -48_000, "Travel USD": 10_000])
            let before = try await balances(client, fixture, "?at=2026-02-27")
            #expect(before.items == ["Shinhan": 0, "Hyundai card": 0, "Travel USD": 0], "nothing before the opening day")
            let april = try await balances(client, fixture, "?at=2026-04-30&in=KRW")
            #expect(april.items == ["Shinhan": 3_814_000, "Hyundai card": 0, "Travel USD": 20_000])
            let cardRow = (april.object["items"] as? [[String: Any]])?.first { $0["name"] as? String == "Hyundai card" }
            #expect(cardRow?["otherCurrencyExpenses"] as? Int == 1, "a USD expense on a KRW card is counted apart, not summed")
            let worth = april.object["netWorth"] as? [String: Any]
            #expect(worth?["amount"] as? Int == 3_814_000 && (worth?["unconverted"] as? [Any])?.count == 1, "no USD rate: listed, not dropped")

            _ = try await post(client, fixture, "/v1/rates", #"{"currency": "USD", "toCurrency": "KRW", "rate": "1380", "date": "2026-04-01T00:00:00+09:00"}"#)
            let converted = try await balances(client, fixture, "?at=2026-04-30&in=KRW")
            #expect((converted.object["netWorth"] as? [String: Any])?["amount"] as? Int == 3_814_000 + 276_000)

            // Transfers are not spending: the month's summary and its budgets leave them out.
            let summary = try await client.send(.get, "/v1/summary?month=2026-04", token: fixture.readOnly)
            #expect((summary.object["totals"] as? [Any])?.isEmpty == true, "\(String(buffer: summary.body))")
            let transfers = try await client.send(.get, "/v1/transfers?limit=10", token: fixture.readOnly)
            #expect((transfers.object["items"] as? [[String: Any]])?.first?["toAmount"] as? Int == 10_000)
        }
    }

    @Test func refusalsAreClearAndWriteNothing() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let bank = try await post(client, fixture, "/v1/accounts", #"{"name": "Bank"}"#)
            let dollars = try await post(client, fixture, "/v1/accounts", #"{"name": "Dollars", "currency": "USD"}"#)
            let before = fixture.service.ledger.appendedIndex
            let cases: [(String, String, HTTPResponse.Status)] = [
                ("/v1/transfers", #"{"accountId": "\#(bank)", "toAccountId": "\#(bank)", "amount": 1000}"#, .conflict),
                ("/v1/transfers", #"{"accountId": "\#(bank)", "toAccountId": "\#(UUID().uuidString)", "amount": 1000}"#, .conflict),
                ("/v1/transfers", #"{"accountId": "\#(bank)", "toAccountId": "\#(bank)", "amount": 0}"#, .badRequest),
                ("/v1/accounts", #"{"name": "Fake", "currency": "XXY"}"#, .badRequest),
                ("/v1/accounts", #"{"name": "Huge", "openingBalance": 1000000000000001}"#, .badRequest),
                ("/v1/accounts", #"{"name": "Kind", "kind": "crypto"}"#, .badRequest),
                ("/v1/accounts", #"{"name": ""}"#, .badRequest),
                ("/v1/expenses", #"{"amount": 1000, "accountId": "\#(UUID().uuidString)"}"#, .conflict),
                ("/v1/transfers", #"{"accountId": "\#(bank)", "toAccountId": "\#(dollars)", "amount": 1000}"#, .conflict),
            ]
            for (path, body, status) in cases {
                let response = try await client.send(.post, path, token: fixture.readWrite, json: body)
                let text = String(buffer: response.body)
                #expect(response.status == status, "\(body): \(text)")
                #expect(text.contains(#""message""#))
            }
            for query in ["?at=yesterday", "?at=12", "?in=won", "?in=KRW&x=1", "?at=\(String(repeating: "9", count: 50))"] {
                let response = try await client.send(.get, "/v1/balances" + query, token: fixture.readOnly)
                #expect(response.status == .badRequest, "\(query): \(String(buffer: response.body))")
            }
            #expect(try await client.send(.get, "/v1/transfers?limit=0", token: fixture.readOnly).status == .badRequest)
            #expect(fixture.service.ledger.appendedIndex == before, "nothing was written")
        }
    }

    /// A Korean card closing on the 14th and paid on the 1st: March's statement runs from
    /// February 15th to March 14th, is due April 1st, nets a cancellation, and is paid by a
    /// transfer from the bank.
    /// A card whose closing day is changed keeps its statements that closed: the new days apply
    /// from next month's statement (the change is made now, by the real clock).
    @Test func aCardWhoseClosingDayChangesKeepsItsPastStatements() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let card = try await post(
                client, fixture, "/v1/accounts", #"{"name": "Card", "kind": "card", "closingDay": 14, "paymentDay": 1, "openingDate": "2020-01-01T00:00:00Z"}"#)
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let now = calendar.dateComponents([.year, .month], from: Date())
            let (year, month) = (now.year!, now.month!)
            let (nextYear, next) = month == 12 ? (year + 1, 1) : (year, month + 1)
            let (thisMonth, nextMonth) = (String(format: "%04d-%02d", year, month), String(format: "%04d-%02d", nextYear, next))
            func bills() async throws -> [String: String] {
                let answer = try await client.send(.get, "/v1/accounts/\(card)/bills?from=\(thisMonth)&to=\(nextMonth)", token: fixture.readOnly).object
                return Dictionary(
                    uniqueKeysWithValues: (answer["items"] as? [[String: Any]] ?? []).map { ($0["month"] as? String ?? "", $0["to"] as? String ?? "") })
            }
            #expect(try await bills() == [thisMonth: "\(thisMonth)-14", nextMonth: "\(nextMonth)-14"])
            let changed = try await client.send(.patch, "/v1/accounts/\(card)", token: fixture.readWrite, json: #"{"closingDay": 25}"#)
            #expect(changed.status == .ok)
            #expect(try await bills() == [thisMonth: "\(thisMonth)-14", nextMonth: "\(nextMonth)-25"], "this month's statement keeps its day")
            // Changed again in the same month: the last change applies from next month.
            _ = try await client.send(.patch, "/v1/accounts/\(card)", token: fixture.readWrite, json: #"{"closingDay": 20}"#)
            #expect(try await bills() == [thisMonth: "\(thisMonth)-14", nextMonth: "\(nextMonth)-20"], "the last change of a month wins")
            // Cleared: no statement from next month on; the ones that closed stay, and so do their bills.
            _ = try await client.send(.patch, "/v1/accounts/\(card)", token: fixture.readWrite, json: #"{"closingDay": null}"#)
            #expect(try await bills() == [thisMonth: "\(thisMonth)-14"])
        }
    }

    @Test func aCardsBillsFollowItsClosingAndPaymentDays() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let bank = try await post(
                client, fixture, "/v1/accounts", #"{"name": "Bank", "openingBalance": 2000000, "openingDate": "2026-01-01T00:00:00+09:00"}"#)
            let card = try await post(
                client, fixture, "/v1/accounts",
                #"{"name": "Card", "kind": "card", "closingDay": 14, "paymentDay": 1, "openingDate": "2026-01-01T00:00:00+09:00"}"#)
            for (kind, amount, date) in [
                ("expense", 30000, "2026-02-15T09:00:00+09:00"), ("expense", 50000, "2026-03-14T23:30:00+09:00"),
                ("income", 10000, "2026-03-02T12:00:00+09:00"), ("expense", 70000, "2026-03-15T00:10:00+09:00"),
            ] {
                _ = try await post(client, fixture, "/v1/expenses", #"{"kind": "\#(kind)", "amount": \#(amount), "accountId": "\#(card)", "date": "\#(date)"}"#)
            }
            _ = try await post(
                client, fixture, "/v1/transfers", #"{"accountId": "\#(bank)", "toAccountId": "\#(card)", "amount": 70000, "date": "2026-04-01T10:00:00+09:00"}"#
            )
            let response = try await client.send(.get, "/v1/accounts/\(card)/bills?from=2026-03&to=2026-04", token: fixture.readOnly)
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let bills = response.object["items"] as? [[String: Any]] ?? []
            #expect(bills.map { $0["month"] as? String } == ["2026-03", "2026-04"])
            let march = bills.first ?? [:]
            #expect(march["from"] as? String == "2026-02-15" && march["to"] as? String == "2026-03-14" && march["due"] as? String == "2026-04-01")
            #expect(march["charged"] as? Int == 80000 && march["cancelled"] as? Int == 10000 && march["amount"] as? Int == 70000)
            #expect(march["paid"] as? Int == 70000 && march["status"] as? String == "paid")
            #expect(bills.last?["charged"] as? Int == 70000, "a purchase the day after the close is on the next statement")

            #expect(try await client.send(.get, "/v1/accounts/\(bank)/bills", token: fixture.readOnly).status == .notFound, "no closing day: no bills")
            for query in ["?from=2026-05&to=2026-04", "?from=2016-01&to=2026-04", "?to=april", "?month=2026-04"] {
                #expect(try await client.send(.get, "/v1/accounts/\(card)/bills\(query)", token: fixture.readOnly).status == .badRequest, "\(query)")
            }
            let refused = try await client.send(.post, "/v1/accounts", token: fixture.readWrite, json: #"{"name": "X", "kind": "card", "closingDay": 32}"#)
            #expect(refused.status == .badRequest)
        }
    }
}
