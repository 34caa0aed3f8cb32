import Foundation
import Testing
import TallyCore
@testable import TallyLedger
import TallyLog
import TallyTestSupport

/// The per-rule record of decided days (issue 35): a materialisation pass looks only at days
/// after it while the rule is unchanged, looks at the whole window again once the rule changed,
/// and a lost or damaged record costs a full pass, never a duplicate.
@Suite struct RecurrenceProgressTests {
    let folder = TemporaryDirectory("tally-recurrence-progress")

    static func at(_ text: String) -> DateTime { DateTime(iso8601: text)! }
    static func day(_ text: String) -> Int { Recurrence.day(text)! }

    /// A ledger with one daily rule from 2030-01-01, and the rule's id.
    func ledgerWithRule(_ name: String) async throws -> (Ledger, UUID) {
        let ledger = try Ledger(directory: try DataDirectory.create(path: folder.file(name), name: name))
        let rule = UUID()
        _ = try await ledger.create(
            .recurring, id: rule,
            [.cadence: .string("daily"), .startDate: .dateTime(Self.at("2030-01-01T08:30:00+09:00")), .amount: .int(1_000), .payee: .string("Bakery")],
            actor: "t")
        return (ledger, rule)
    }

    func occurrenceDays(_ ledger: Ledger) throws -> [String] {
        try ledger.views.expenses(try ExpenseQuery([("payee", "Bakery"), ("limit", "1000")])).rows.map { String($0.date.prefix(10)) }.sorted()
    }

    /// With no rule left, a pass makes nothing and forgets the days it had decided (a rule
    /// made again later starts from its whole window), without looking anything up.
    @Test func aPassWithNoRuleLeftForgetsTheDecidedDays() async throws {
        let (ledger, rule) = try await ledgerWithRule("gone")
        defer { ledger.close() }
        #expect(try await ledger.materializeRecurrences(now: Self.at("2030-01-03T12:00:00+09:00")) == 3)
        #expect(RecurrenceProgress.load(from: ledger.directory).rules[rule.lowercased] != nil)
        try await ledger.delete(.recurring, id: rule, actor: "t")
        #expect(try await ledger.materializeRecurrences(now: Self.at("2030-01-05T12:00:00+09:00")) == 0)
        #expect(RecurrenceProgress.load(from: ledger.directory) == RecurrenceProgress())
        #expect(try occurrenceDays(ledger) == ["2030-01-01", "2030-01-02", "2030-01-03"])
    }

    @Test func aPassLooksOnlyAtTheDaysAfterThoseDecided() async throws {
        let (ledger, rule) = try await ledgerWithRule("after")
        defer { ledger.close() }
        #expect(try await ledger.materializeRecurrences(now: Self.at("2030-01-03T12:00:00+09:00")) == 3)
        var recorded = RecurrenceProgress.load(from: ledger.directory)
        #expect(recorded.rules[rule.lowercased]?.decidedThrough == Self.day("2030-01-03"))

        // A record that says the days through the 10th are decided (for the rule as it is):
        // the next pass makes the 11th and 12th only.
        recorded.rules[rule.lowercased]?.decidedThrough = Self.day("2030-01-10")
        try recorded.save(in: ledger.directory)
        #expect(try await ledger.materializeRecurrences(now: Self.at("2030-01-12T12:00:00+09:00")) == 2)
        #expect(try occurrenceDays(ledger) == ["2030-01-01", "2030-01-02", "2030-01-03", "2030-01-11", "2030-01-12"])
        #expect(RecurrenceProgress.load(from: ledger.directory).rules[rule.lowercased]?.decidedThrough == Self.day("2030-01-12"))
    }

    @Test func aChangedRuleIsLookedAtWholeAgain() async throws {
        let (ledger, rule) = try await ledgerWithRule("changed")
        defer { ledger.close() }
        _ = try await ledger.materializeRecurrences(now: Self.at("2030-01-03T12:00:00+09:00"))
        var recorded = RecurrenceProgress.load(from: ledger.directory)
        let before = recorded.rules[rule.lowercased]!.version
        recorded.rules[rule.lowercased]?.decidedThrough = Self.day("2030-01-10")
        try recorded.save(in: ledger.directory)
        // Any change to the rule (here its memo, which does not move the schedule) is a new version.
        _ = try await ledger.update(.recurring, id: rule, [.memo: .string("fresh bread")], actor: "t")
        #expect(try await ledger.materializeRecurrences(now: Self.at("2030-01-12T12:00:00+09:00")) == 9, "the 4th to the 12th")
        #expect(try occurrenceDays(ledger).count == 12)
        let after = RecurrenceProgress.load(from: ledger.directory).rules[rule.lowercased]!
        #expect(after.version != before)
        #expect(after.decidedThrough == Self.day("2030-01-12"))
    }

    @Test func aLostOrDamagedRecordCostsAFullPassNeverADuplicate() async throws {
        let (ledger, _) = try await ledgerWithRule("lost")
        defer { ledger.close() }
        _ = try await ledger.materializeRecurrences(now: Self.at("2030-01-05T12:00:00+09:00"))
        let path = RecurrenceProgress.path(in: ledger.directory)
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: path))
        #expect(try await ledger.materializeRecurrences(now: Self.at("2030-01-05T12:00:00+09:00")) == 0)
        try FileManager.default.removeItem(atPath: path)
        #expect(try await ledger.materializeRecurrences(now: Self.at("2030-01-06T12:00:00+09:00")) == 1)
        #expect(try occurrenceDays(ledger).count == 6)
        #expect(FileManager.default.fileExists(atPath: path), "written again")
    }

    @Test func aLogCutShorterForgetsTheDecidedDays() async throws {
        let (ledger, _) = try await ledgerWithRule("repaired")
        _ = try await ledger.materializeRecurrences(now: Self.at("2030-01-05T12:00:00+09:00"))
        let directory = ledger.directory
        ledger.close()
        #expect(FileManager.default.fileExists(atPath: RecurrenceProgress.path(in: directory)))
        // What a cut took, the record may count as made: it goes with the cut.
        _ = try Ledger.repairLog(directory, lockTimeout: 5)
        #expect(!FileManager.default.fileExists(atPath: RecurrenceProgress.path(in: directory)))
    }

    @Test func aRecordThatNamesDaysAfterTodayCountsThemAsToday() async throws {
        let (ledger, rule) = try await ledgerWithRule("ahead")
        defer { ledger.close() }
        _ = try await ledger.materializeRecurrences(now: Self.at("2030-01-03T12:00:00+09:00"))
        var recorded = RecurrenceProgress.load(from: ledger.directory)
        recorded.rules[rule.lowercased]?.decidedThrough = .max  // damaged, or written by a clock far ahead
        try recorded.save(in: ledger.directory)
        #expect(try await ledger.materializeRecurrences(now: Self.at("2030-01-05T12:00:00+09:00")) == 0)
        #expect(RecurrenceProgress.load(from: ledger.directory).rules[rule.lowercased]?.decidedThrough == Self.day("2030-01-05"))
        #expect(try await ledger.materializeRecurrences(now: Self.at("2030-01-06T12:00:00+09:00")) == 1, "the next day is looked at")
    }

    @Test func anOccurrenceInTheLogButNotYetInTheViewsIsNotMadeAgain() async throws {
        let (ledger, rule) = try await ledgerWithRule("unprojected")
        defer { ledger.close() }
        // A delivery's events are appended before they are projected: a peer's copy of the
        // 2nd's occurrence, its amount edited by a person there, sits in the log only.
        let second = OccurrenceID.of(rule: rule, day: Self.day("2030-01-02"))
        _ = try ledger.writer.append([
            EventDraft(
                entityType: .expense, entityID: .uuid(second), operation: .create,
                properties: [
                    .kind: .string("expense"), .amount: .int(777), .currency: .string("KRW"), .payee: .string("Bakery"),
                    .date: .dateTime(Self.at("2030-01-02T08:30:00+09:00")), .repeat: .string("daily"),
                ], actor: "peer")
        ])
        #expect(try await ledger.materializeRecurrences(now: Self.at("2030-01-03T12:00:00+09:00")) == 2, "the 1st and the 3rd")
        let amounts = try ledger.views.expenses(try ExpenseQuery([("payee", "Bakery")])).rows.map(\.amount).sorted()
        #expect(amounts == [777, 1_000, 1_000], "the peer's edit stands")
    }

    /// Found by review: a member's write of a rule made every rule's missing occurrences, all
    /// recorded as that member's — another member's rent among them. Only the rule written is
    /// theirs to make; the others are left to the ledger's own pass.
    @Test func aMembersRuleMakesOnlyItsOwnOccurrencesAsTheirs() async throws {
        let ledger = try Ledger(directory: try DataDirectory.create(path: folder.file("members"), name: "members"))
        defer { ledger.close() }
        let start = DateTime(epochMillis: Int64(Date().addingTimeInterval(-2 * 86_400).timeIntervalSince1970 * 1000), offsetMinutes: 540)
        // Lee's rule, as a sync brings it: written, its occurrences not made yet.
        let lees = UUID()
        _ = try ledger.session.writeAll(actor: "member:lee") { _ in
            [
                EventDraft(
                    entityType: .recurring, entityID: .uuid(lees), operation: .create,
                    properties: [
                        .cadence: .string("daily"), .startDate: .dateTime(start), .amount: .int(500_000), .payee: .string("Rent"),
                        .kind: .string("expense"), .currency: .string("KRW"), .monthEnd: .string("clamp"),
                    ],
                    actor: "member:lee")
            ]
        }
        _ = try await ledger.create(
            .recurring, [.cadence: .string("daily"), .startDate: .dateTime(start), .amount: .int(1_000), .payee: .string("Bus")], actor: "member:kim")
        let made = try ledger.views.expenses(try ExpenseQuery([("limit", "1000")])).rows
        #expect(!made.isEmpty && made.allSatisfy { $0.payee == "Bus" }, "\(made.map(\.payee))")
        // The ledger's own pass makes Lee's, as its own.
        #expect(try await ledger.materializeRecurrences() == made.count)
        #expect(try ledger.views.expenses(try ExpenseQuery([("payee", "Rent")])).rows.count == made.count)
    }
}
