import Foundation
import Testing
import TallyCore
import TallyKit
import TallyTestSupport

/// TallyKit's replica: typed writes through the ledger's gate, typed queries, as-of reads,
/// and the writer lock taken by turns.
@Suite struct ReplicaTests {
    /// An app's careless values (found by a hostile review): a NaN lock timeout waited
    /// forever for a held lock, and a retry's huge first wait overflowed its doubling.
    @Test func aNaNLockTimeoutIsRefusedAndRetryWaitsAreBounded() async throws {
        let folder = TemporaryDirectory("kit")
        await #expect(throws: ValidationError.self) { _ = try await Replica.open(at: folder.file("ledger"), actor: "minji", lockTimeout: .nan) }
        await #expect(throws: ValidationError.self) { _ = try await Replica.open(at: folder.file("ledger"), actor: "minji", lockTimeout: -1) }
        let policy = RetryPolicy(attempts: 3, first: .seconds(Int64.max), longest: .seconds(Int64.max))
        #expect(policy.first == .seconds(365 * 86_400) && policy.longest == .seconds(365 * 86_400))
        #expect(RetryPolicy(first: .seconds(-5)).first == .zero)
    }

    @Test func typedWritesAreReadBackAndAnUpdateSetsOnlyWhatItNames() async throws {
        let folder = TemporaryDirectory("kit")
        let replica = try await Replica.open(at: folder.file("ledger"), name: "minji's phone", actor: "minji")
        let food = try await replica.create(CategoryFields(name: "Food", icon: "🍚"))
        let id = try await replica.create(
            ExpenseFields(amount: 12_000, currency: "KRW", date: Date(timeIntervalSince1970: 1_795_000_000), categoryID: food, payee: "Kimbap", tags: ["lunch"])
        )
        var row = try #require(try replica.query.expense(id: id))
        #expect(row.amount == 12_000 && row.payee == "Kimbap" && row.categoryName == "Food" && row.tags == ["lunch"])

        try await replica.update(id, ExpenseFields(payee: .some(nil), memo: "with Jisoo"))
        row = try #require(try replica.query.expense(id: id))
        #expect(row.payee == nil && row.memo == "with Jisoo" && row.amount == 12_000 && row.categoryId == food.lowercased)
        #expect(try replica.query.history(of: id).map(\.event.operation) == [.create, .update])
        #expect(try replica.query.history(of: id).allSatisfy { $0.event.actor == "minji" })

        try await replica.delete(.expense, id: id)
        #expect(try replica.query.expense(id: id) == nil)
        #expect(try replica.query.expenses().isEmpty)
    }

    @Test func aRefusedWriteWritesNothing() async throws {
        let folder = TemporaryDirectory("kit")
        let replica = try await Replica.open(at: folder.file("ledger"), actor: "minji")
        let before = try replica.query.projectedIndex()
        await #expect(throws: ValidationError.self) { try await replica.create(ExpenseFields(amount: 1_000, currency: "WON")) }
        await #expect(throws: ValidationError.self) { try await replica.create(TodoFields(title: "")) }
        await #expect(throws: ValidationError.self) { try await replica.create(ExpenseFields(amount: 1, date: Date(timeIntervalSince1970: .infinity))) }
        await #expect(throws: ValidationError.self) { try await replica.create(ExpenseFields(amount: 1, attachments: [String(repeating: "a", count: 64)])) }
        await #expect(throws: (any Error).self) { try await replica.update(UUID(), ExpenseFields(amount: 5)) }
        await #expect(throws: ValidationError.self) { try await replica.addAttachment(Data("not an image".utf8)) }
        #expect(throws: ValidationError.self) { try replica.attachment("../../etc/passwd") }
        #expect(try replica.query.projectedIndex() == before)
        await #expect(throws: ValidationError.self) { try await Replica.open(at: folder.file("other"), actor: "") }
        await #expect(throws: ValidationError.self) { try await Replica.open(at: folder.file("other"), actor: "minji\u{1B}[2J") }
        #expect(!FileManager.default.fileExists(atPath: folder.file("other")), "a refused open creates no replica")
    }

    @Test func anIdempotentCreateRetriedNamesTheSameEntity() async throws {
        let folder = TemporaryDirectory("kit")
        let replica = try await Replica.open(at: folder.file("ledger"), actor: "minji")
        let first = try await replica.create(TodoFields(title: "Walk 10,000 steps", checks: [true, false], isChallenge: true), idempotencyKey: "walk")
        let again = try await replica.create(TodoFields(title: "Walk 10,000 steps", checks: [true, false], isChallenge: true), idempotencyKey: "walk")
        #expect(first == again)
        #expect(try replica.query.todos().count == 1)
        #expect(try replica.query.todo(id: first)?.percentage == 50)
    }

    @Test func settingsAttachmentsAndAsOfReads() async throws {
        let folder = TemporaryDirectory("kit")
        let replica = try await Replica.open(at: folder.file("ledger"), actor: "minji")
        try await replica.setSetting("defaultCurrency", json: "\"USD\"")
        let index = try replica.query.projectedIndex()
        try await replica.setSetting("defaultCurrency", json: "\"KRW\"")
        #expect(try replica.query.setting("defaultCurrency") == "\"KRW\"")
        #expect(try replica.query(asOf: String(index)).setting("defaultCurrency") == "\"USD\"")

        let digest = try await replica.addAttachment(PNGFixture.zeros(width: 4, height: 3, interlaced: false))
        #expect(try replica.attachment(digest) == PNGFixture.zeros(width: 4, height: 3, interlaced: false))
        let id = try await replica.create(ExpenseFields(amount: 3_500, attachments: [digest]))
        #expect(try replica.query.expense(id: id)?.attachments == [digest])
    }

    @Test func twoOpenersTakeTheWriterLockByTurns() async throws {
        // Two replicas of one folder, as the app and its widget open it: the second write
        // waits for the first one's idle release, and each sees the other's writes.
        let folder = TemporaryDirectory("kit")
        let app = try await Replica.open(at: folder.file("ledger"), actor: "app", writerIdleRelease: .milliseconds(200))
        let widget = try await Replica.open(at: folder.file("ledger"), actor: "widget", lockTimeout: 10)
        let walk = try await app.create(TodoFields(title: "Walk", checks: [false], isChallenge: true))
        let started = ContinuousClock.now
        try await widget.update(walk, TodoFields(checks: [true]))
        #expect(ContinuousClock.now - started >= .milliseconds(150), "the widget waited for the app's lock")
        #expect(try app.query.todo(id: walk)?.checks == [true])
        await widget.releaseWriter()
        try await app.create(ExpenseFields(amount: 4_500))
        #expect(try widget.query.expenses().count == 1)
    }
}
