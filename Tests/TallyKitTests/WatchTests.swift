import Foundation
import Testing
import TallyCore
@testable import TallyKit
import TallyTestSupport

/// Observation: a watched query yields again when a write changes its answer (whichever
/// replica object — or process — wrote), and the change feed resumes from a cursor.
@Suite struct WatchTests {
    @Test func aWatchedQueryYieldsNowAndAfterEachChangeThatMatters() async throws {
        let folder = TemporaryDirectory("kit")
        let app = try await Replica.open(at: folder.file("ledger"), actor: "app")
        let widget = try await Replica.open(at: folder.file("ledger"), actor: "widget")
        var answers = widget.watch { try $0.expenses().map(\.amount) }.makeAsyncIterator()
        #expect(try await answers.next() == [])
        try await app.create(ExpenseFields(amount: 1_000, date: Date(timeIntervalSince1970: 1_795_000_000)))
        #expect(try await answers.next() == [1_000])
        try await app.setSetting("local.theme", json: "\"dark\"")  // moves the views, not the answer
        try await app.create(ExpenseFields(amount: 2_000, date: Date(timeIntervalSince1970: 1_795_100_000)))
        #expect(try await answers.next() == [2_000, 1_000])
    }

    @Test func theChangeFeedResumesFromItsCursor() async throws {
        let folder = TemporaryDirectory("kit")
        let replica = try await Replica.open(at: folder.file("ledger"), actor: "app")
        for amount in [100, 200, 300] as [Int64] { try await replica.create(ExpenseFields(amount: amount)) }
        var feed = replica.changes(after: 0).makeAsyncIterator()
        var seen: [UInt64] = []
        for _ in 0..<3 { seen.append(try #require(try await feed.next()).index) }
        #expect(seen == [1, 2, 3])
        var resumed = replica.changes(after: 2).makeAsyncIterator()
        #expect(try await resumed.next()?.index == 3)
        try await replica.create(ExpenseFields(amount: 400))
        #expect(try await resumed.next()?.index == 4)
        #expect(try await feed.next()?.index == 4)
    }
}

/// The waits between a sync's tries: random, within the doubling ceiling, never past `longest`.
@Suite struct RetryPolicyTests {
    @Test func waitsStayWithinTheDoublingCeiling() {
        let policy = RetryPolicy(attempts: 10, first: .milliseconds(100), longest: .seconds(1))
        for attempt in 1...40 {
            let ceiling = min(Duration.seconds(1), .milliseconds(100) * (1 << min(attempt - 1, 20)))
            let waits = (0..<50).map { _ in policy.wait(after: attempt) }
            #expect(waits.allSatisfy { $0 >= .zero && $0 <= ceiling }, "attempt \(attempt)")
            #expect(Set(waits).count > 1, "jittered")
        }
        #expect(RetryPolicy(attempts: 0).attempts == 1, "at least one try")
    }
}
