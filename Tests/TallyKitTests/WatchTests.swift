import Foundation
import Testing
import TallyCore
import TallyKit
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
