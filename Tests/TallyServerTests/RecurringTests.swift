import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PropertyBased
import Testing
import TallyCore
import TallyLedger
import TallyLog
@testable import TallyServer
import TallySync
import TallyTestSupport

/// Recurring rules (issue 18): occurrences materialised as ordinary expenses with ids derived
/// from the rule and the day, so replicas that materialise apart converge to one expense per
/// occurrence; skip, end, edit-one and edit-the-rule.
@Suite struct RecurringTests {
    static func at(_ text: String) -> DateTime { DateTime(iso8601: text)! }

    func amounts(_ ledger: Ledger, payee: String) throws -> [String: Int64] {
        var result: [String: Int64] = [:]
        let page = try ledger.views.expenses(try ExpenseQuery([("payee", payee), ("limit", "1000")]))
        for row in page.rows { result[String(row.date.prefix(10))] = row.amount }
        return result
    }

    @Test func skipEndEditOneAndEditTheRule() async throws {
        let fixture = try ServerFixture()
        let ledger = fixture.service.ledger
        let rule = UUID()
        _ = try await ledger.create(
            .recurring, id: rule,
            [
                .cadence: .string("daily"), .startDate: .dateTime(Self.at("2030-01-01T08:30:00+09:00")),
                .amount: .int(1_000), .payee: .string("Bakery"),
            ], actor: "t")
        #expect(try amounts(ledger, payee: "Bakery").isEmpty, "nothing is due before the start")
        #expect(try await ledger.materializeRecurrences(now: Self.at("2030-01-05T12:00:00+09:00")) == 5)
        #expect(try await ledger.materializeRecurrences(now: Self.at("2030-01-05T12:00:00+09:00")) == 0, "twice is once")
        let occurrences = try ledger.views.expenses(try ExpenseQuery([("payee", "Bakery")])).rows
        #expect(occurrences.allSatisfy { $0.date.hasSuffix("T08:30:00+09:00") && $0.repeat == "daily" }, "the start's time and offset")

        // Editing the rule changes the occurrences still to come, not those made.
        _ = try await ledger.update(.recurring, id: rule, [.amount: .int(2_000)], actor: "t")
        _ = try await ledger.materializeRecurrences(now: Self.at("2030-01-07T12:00:00+09:00"))
        // Editing one occurrence changes it alone, and it is never made again once deleted.
        let third = OccurrenceID.of(rule: rule, day: Recurrence.day("2030-01-03")!)
        let fourth = OccurrenceID.of(rule: rule, day: Recurrence.day("2030-01-04")!)
        _ = try await ledger.update(.expense, id: third, [.amount: .int(1_500)], actor: "t")
        try await ledger.delete(.expense, id: fourth, actor: "t")
        // A day before the start has nothing to skip: refused, and the rule is unchanged.
        let before = try ledger.views.entityJSON(.recurring, id: rule)
        await #expect {
            try await ledger.skipOccurrence(rule: rule, day: "2029-12-31", actor: "t")
        } throws: { "\($0)".contains("before the rule starts") }
        #expect(try ledger.views.entityJSON(.recurring, id: rule) == before)
        // Skip a coming day, then end the rule.
        _ = try await ledger.skipOccurrence(rule: rule, day: "2030-01-09", actor: "t")
        _ = try await ledger.update(.recurring, id: rule, [.endDate: .dateTime(Self.at("2030-01-10T00:00:00+09:00"))], actor: "t")
        _ = try await ledger.materializeRecurrences(now: Self.at("2030-01-31T12:00:00+09:00"))
        #expect(
            try amounts(ledger, payee: "Bakery") == [
                "2030-01-01": 1_000, "2030-01-02": 1_000, "2030-01-03": 1_500, "2030-01-05": 1_000,
                "2030-01-06": 2_000, "2030-01-07": 2_000, "2030-01-08": 2_000, "2030-01-10": 2_000,
            ])
        // Skipping a day already made deletes its occurrence.
        _ = try await ledger.skipOccurrence(rule: rule, day: "2030-01-01", actor: "t")
        #expect(try amounts(ledger, payee: "Bakery")["2030-01-01"] == nil)
        let json = try ledger.views.entityJSON(.recurring, id: rule)?.serialized ?? ""
        #expect(json.contains(#""skippedDates":["2030-01-01","2030-01-09"]"#), "\(json)")
    }

    @Test func aRuleFromLongAgoMakesOnlyTheLastTwentyYearsAndOneThatCannotBeReadStopsNoOther() async throws {
        let fixture = try ServerFixture()
        let ledger = fixture.service.ledger
        let old = UUID()
        _ = try await ledger.create(
            .recurring, id: old,
            [
                .cadence: .string("weekly"), .startDate: .dateTime(Self.at("0001-01-01T00:00:00Z")),
                .amount: .int(1), .payee: .string("Ancient"),
            ], actor: "t")
        let made = try ledger.views.expenses(try ExpenseQuery([("payee", "Ancient"), ("limit", "1000")]))
        let all = try ledger.views.expenses(try ExpenseQuery([("payee", "Ancient"), ("from", "1900-01-01"), ("limit", "1000")]))
        #expect(!made.rows.isEmpty && made.rows.count == all.rows.count, "nothing older than the window")
        let oldest = try ledger.views.expenses(try ExpenseQuery([("payee", "Ancient"), ("to", "2004-01-01")]))
        #expect(oldest.rows.isEmpty, "twenty years back at most")
        let json = try ledger.views.entityJSON(.recurring, id: old)?.serialized ?? ""
        #expect(json.contains(#""next":["#) && !json.contains(#""next":[]"#), "the next days are found however old the start")
    }

    @Test func changingTheScheduleNeverBackFillsThePast() async throws {
        let fixture = try ServerFixture()
        let ledger = fixture.service.ledger
        let rule = UUID()
        let start = DateTime(epochMillis: DateTime.nowHere.epochMillis - 60 * 86_400_000, offsetMinutes: 0)
        _ = try await ledger.create(
            .recurring, id: rule, [.cadence: .string("weekly"), .startDate: .dateTime(start), .amount: .int(1), .payee: .string("Weekly")], actor: "t")
        let before = try amounts(ledger, payee: "Weekly").keys.sorted()
        #expect(before.count >= 8)
        // A day later, a cadence of every day and a count far above: the past stays as it was.
        let dayLater = DateTime(epochMillis: start.epochMillis + 86_400_000, offsetMinutes: 0)
        _ = try await ledger.update(.recurring, id: rule, [.startDate: .dateTime(dayLater), .cadence: .string("daily"), .count: .int(1_000)], actor: "t")
        #expect(try amounts(ledger, payee: "Weekly").keys.sorted() == before, "no occurrence made for days before the change")
        // A rule without an amount (a peer's, written past the write rules) cannot be read, so it
        // makes nothing — and stops no other rule (materialisation passes over it).
        let event = Event(
            origin: ReplicaID.random(), sequence: 1, timestamp: HybridTimestamp(millis: 1, counter: 0), actor: "peer",
            entityType: .recurring, entityID: .uuid(UUID()), operation: .create,
            properties: [.cadence: .string("daily"), .startDate: .dateTime(start)], previousHash: .zero)
        var broken = LedgerState.Entity(first: event)
        broken.apply(event)
        #expect(throws: (any Error).self) { try RecurringRule(broken) }
    }

    @Test func skipsMadeApartOnTwoReplicasBothHold() async throws {
        let home = try ServerFixture(), away = try ServerFixture()
        let rule = UUID()
        _ = try await home.service.ledger.create(
            .recurring, id: rule,
            [
                .cadence: .string("daily"), .startDate: .dateTime(Self.at("2032-03-01T09:00:00Z")),
                .amount: .int(100), .payee: .string("Daily"),
            ], actor: "t")
        let first = home.folder.file("rule")
        _ = try SegmentBundle.export(home.service.directory, to: first, for: nil)
        _ = try await away.service.ledger.importBundle(from: first)
        // Apart: home skips the 3rd; away makes the first four days, then skips the 2nd.
        _ = try await home.service.ledger.skipOccurrence(rule: rule, day: "2032-03-03", actor: "t")
        _ = try await away.service.ledger.materializeRecurrences(now: Self.at("2032-03-04T12:00:00Z"))
        _ = try await away.service.ledger.skipOccurrence(rule: rule, day: "2032-03-02", actor: "t")
        try await home.exchangeBundles(with: away)
        for fixture in [home, away] {
            _ = try await fixture.service.ledger.materializeRecurrences(now: Self.at("2032-03-05T12:00:00Z"))
        }
        for fixture in [home, away] {
            #expect(
                try amounts(fixture.service.ledger, payee: "Daily").keys.sorted() == ["2032-03-01", "2032-03-04", "2032-03-05"],
                "both skips hold on both replicas, though the rule's skippedDates kept one list")
        }
        let views = try [home, away].map { try $0.service.ledger.views.expensesPageJSON(try ExpenseQuery([])).serialized }
        #expect(views[0] == views[1])
    }

    @Test func twoReplicasThatMaterialiseTheSameOccurrencesApartConvergeToOne() async throws {
        let home = try ServerFixture(), away = try ServerFixture()
        let rule = UUID()
        _ = try await home.service.ledger.create(
            .recurring, id: rule,
            [
                .cadence: .string("monthly"), .startDate: .dateTime(Self.at("2031-01-31T09:00:00Z")),
                .amount: .int(700_000), .payee: .string("Rent"),
            ], actor: "t")
        let first = home.folder.file("rule")
        _ = try SegmentBundle.export(home.service.directory, to: first, for: nil)
        _ = try await away.service.ledger.importBundle(from: first)
        // Apart, each makes the months due by its own "now".
        #expect(try await home.service.ledger.materializeRecurrences(now: Self.at("2031-05-15T00:00:00Z")) == 4)
        #expect(try await away.service.ledger.materializeRecurrences(now: Self.at("2031-06-15T00:00:00Z")) == 5)
        try await home.exchangeBundles(with: away)
        for fixture in [home, away] {
            #expect(try amounts(fixture.service.ledger, payee: "Rent").keys.sorted() == ["2031-01-31", "2031-02-28", "2031-03-31", "2031-04-30", "2031-05-31"])
            #expect(try fixture.service.ledger.views.conflicts(entity: nil).isEmpty, "the same values written twice are no conflict")
        }
        let views = try [home, away].map { try $0.service.ledger.views.expensesPageJSON(try ExpenseQuery([])).serialized }
        #expect(views[0] == views[1])
    }

    /// The property: whatever the rule and whenever each of two replicas materialises it
    /// (one of them maybe after editing the rule), merging both replicas' events in any order
    /// gives one expense per occurrence day of either, and the same state.
    @Test func materialisingApartAlwaysConverges() async {
        await propertyCheck(count: 500, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = SplitMix64(seed: seed)
            let rule = RandomEvents.uuid(&rng)
            let cadence = Recurrence.cadences.randomElement(using: &rng)!
            let monthEnd = Recurrence.monthEnds.randomElement(using: &rng)!
            let start = Recurrence.day("2023-12-28")! + Int.random(in: 0...800, using: &rng)
            let count = Bool.random(using: &rng) ? Int.random(in: 1...40, using: &rng) : nil
            let end = Bool.random(using: &rng) ? start + Int.random(in: 0...400, using: &rng) : nil
            let replicas = [ReplicaID(RandomEvents.uuid(&rng)), ReplicaID(RandomEvents.uuid(&rng))]
            var events: [Event] = []
            var expected: Set<UUID> = []
            for (index, origin) in replicas.enumerated() {
                let today = start + Int.random(in: -5...400, using: &rng)
                let amount = Int64(index == 1 && Bool.random(using: &rng) ? 2_000 : 1_000)  // replica 2 may have edited the rule
                let days = Recurrence.days(start: start, cadence: cadence, monthEnd: monthEnd, end: end, count: count, through: today)
                for (sequence, day) in days.enumerated() {
                    let id = OccurrenceID.of(rule: rule, day: day)
                    expected.insert(id)
                    events.append(
                        Event(
                            origin: origin, sequence: UInt64(sequence + 1),
                            timestamp: HybridTimestamp(millis: UInt64(1_000 + index * 7 + sequence), counter: 0),
                            actor: "recurrence", entityType: .expense, entityID: .uuid(id), operation: .create,
                            properties: [.amount: .int(amount), .date: .dateTime(DateTime(epochMillis: Int64(day) * 86_400_000, offsetMinutes: 0))],
                            previousHash: .zero))
                }
            }
            var states: [[EntityID: PropertyMap]] = []
            for _ in 0..<2 {
                var state = LedgerState()
                for event in events.shuffled(using: &rng) { state.apply(event) }
                states.append(Dictionary(uniqueKeysWithValues: state.entities.values.filter(\.isLive).map { ($0.id, $0.values) }))
            }
            #expect(Set(states[0].keys) == Set(expected.map { EntityID.uuid($0) }), "seed \(seed): one expense per occurrence day")
            #expect(states[0] == states[1], "seed \(seed): the same state in any order")
        }
    }

    @Test func rulesThatMakeNoSenseAreRefusedAndTheAPIListsAndSkips() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let cases: [(String, HTTPResponse.Status, String)] = [
                (#"{"cadence": "hourly", "amount": 100}"#, .badRequest, "cadence"),
                (#"{"amount": 100}"#, .badRequest, "cadence"),
                (#"{"cadence": "daily", "amount": 100, "count": 0}"#, .badRequest, "count"),
                (#"{"cadence": "daily", "amount": 100, "count": 100001}"#, .badRequest, "count"),
                (#"{"cadence": "daily", "amount": 100, "count": 1.5}"#, .badRequest, "count"),
                (#"{"cadence": "daily", "amount": 100, "startDate": "2031-02-01", "endDate": "2031-01-31"}"#, .conflict, "endDate"),
                (#"{"cadence": "daily", "amount": 100, "skippedDates": ["2031-02-30"]}"#, .badRequest, "skippedDates"),
                (#"{"cadence": "daily", "amount": 100, "monthEnd": "round"}"#, .badRequest, "monthEnd"),
                (#"{"cadence": "daily", "amount": 100, "categoryId": "8b1a9953-c461-4b3e-9f5c-1d6a3b1e2f00"}"#, .conflict, "categoryId"),
            ]
            for (body, status, field) in cases {
                let response = try await client.send(.post, "/v1/recurring", token: fixture.readWrite, json: body)
                #expect(response.status == status, "\(body): \(String(buffer: response.body))")
                #expect((response.object["error"] as? [String: Any])?["field"] as? String == field, "\(body)")
            }
            // A rule started three days ago has its occurrences up to today at once.
            let start = DateTime(epochMillis: DateTime.nowHere.epochMillis - 3 * 86_400_000, offsetMinutes: DateTime.nowHere.offsetMinutes)
            let created = try await client.send(
                .post, "/v1/recurring", token: fixture.readWrite,
                json: #"{"cadence": "daily", "amount": 4500, "payee": "Coffee", "startDate": "\#(start)"}"#)
            #expect(created.status == .created && (created.object["next"] as? [String])?.count == 3)
            let id = created.object["id"] as? String ?? ""
            let list = try await client.send(.get, "/v1/expenses?payee=Coffee", token: fixture.readOnly)
            #expect((list.object["items"] as? [Any])?.count == 4, "three days ago through today")
            let rules = try await client.send(.get, "/v1/recurring", token: fixture.readOnly)
            #expect((rules.object["items"] as? [[String: Any]])?.first?["payee"] as? String == "Coffee")
            let tomorrow = (created.object["next"] as? [String])?.first ?? ""
            let skipped = try await client.send(.post, "/v1/recurring/\(id)/skip", token: fixture.readWrite, json: #"{"date": "\#(tomorrow)"}"#)
            #expect(skipped.status == .ok && (skipped.object["skippedDates"] as? [String]) == [tomorrow])
            #expect(!((skipped.object["next"] as? [String]) ?? []).contains(tomorrow))
            for (body, status) in [
                (#"{"date": "tomorrow"}"#, HTTPResponse.Status.badRequest), (#"{"date": "2031-02-30"}"#, .badRequest),
                (#"{"date": "2031-02-01", "x": 1}"#, .badRequest), (#"[]"#, .badRequest),
            ] {
                #expect(try await client.send(.post, "/v1/recurring/\(id)/skip", token: fixture.readWrite, json: body).status == status, "\(body)")
            }
            #expect(
                try await client.send(
                    .post, "/v1/recurring/8b1a9953-c461-4b3e-9f5c-1d6a3b1e2f00/skip", token: fixture.readWrite,
                    json: #"{"date": "2031-02-01"}"#
                ).status == .notFound)
            #expect(try await client.send(.post, "/v1/recurring/\(id)/skip", token: fixture.readOnly, json: #"{"date": "2031-02-01"}"#).status == .forbidden)
        }
    }
}
