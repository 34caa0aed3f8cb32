import Foundation
import Testing
import TallyCore
import TallyLog
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

        // A cursor kept as JSON resumes the same way, checked against the event it named.
        let third = try await lastEvent(replica, 3)
        let kept = try JSONDecoder().decode(ChangeCursor.self, from: try JSONEncoder().encode(ChangeCursor(third)))
        var fromKept = replica.changes(after: kept).makeAsyncIterator()
        #expect(try await fromKept.next()?.index == 4)
        var fromStart = replica.changes(after: .start).makeAsyncIterator()
        #expect(try await fromStart.next()?.index == 1)
    }

    /// The log's event at `index`, as the feed yields it.
    func lastEvent(_ replica: Replica, _ index: UInt64) async throws -> LoggedEvent {
        var feed = replica.changes(after: index - 1).makeAsyncIterator()
        return try #require(try await feed.next())
    }

    /// A split at sync puts a new replica, with a log of its own, in the folder's place: a feed
    /// that was following the old log — running, or resumed from a kept cursor — ends saying
    /// so rather than going on from an index that now names other events.
    @Test(.timeLimit(.minutes(1)), arguments: [1, 3, 6]) func aFeedEndsWhenTheLogItFollowedIsReplaced(eventsInTheNewLog: Int) async throws {
        let folder = TemporaryDirectory("kit")
        let path = folder.file("ledger")
        let replica = try await Replica.open(at: path, actor: "app")
        for amount in [100, 200, 300] as [Int64] { try await replica.create(ExpenseFields(amount: amount)) }
        await replica.releaseWriter()
        var running = replica.changes(after: .start).makeAsyncIterator()
        var third: LoggedEvent?
        for _ in 0..<3 { third = try await running.next() }
        let kept = ChangeCursor(try #require(third))
        #expect(kept.index == 3)

        // A split made whole beside the folder (as `takeNewIdentity` leaves it), put in place at
        // the next open.
        let made = try await Replica.open(at: path + ".split", actor: "app")
        for amount in 1...eventsInTheNewLog { try await made.create(ExpenseFields(amount: Int64(amount))) }
        await made.releaseWriter()
        let madeID = try made.replicaID
        var sizes: [String: Int] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: path + "/log") where name != "writer.lock" {
            sizes[name] = try FileManager.default.attributesOfItem(atPath: path + "/log/" + name)[.size] as? Int
        }
        _ = FileManager.default.createFile(atPath: path + ".split/split-complete", contents: try JSONEncoder().encode(["sizes": sizes]))
        let reopened = try await Replica.open(at: path, actor: "app")
        #expect(try reopened.replicaID == madeID)

        await #expect(throws: ChangeFeedError.cursorNotInThisLog(index: 3)) { _ = try await running.next() }
        var resumed = reopened.changes(after: kept).makeAsyncIterator()
        await #expect(throws: ChangeFeedError.cursorNotInThisLog(index: 3)) { _ = try await resumed.next() }
        var garbage = reopened.changes(after: ChangeCursor(index: 1, hash: "not a hash")).makeAsyncIterator()
        await #expect(throws: ChangeFeedError.cursorNotInThisLog(index: 1)) { _ = try await garbage.next() }
        var anew = reopened.changes(after: .start).makeAsyncIterator()
        #expect(try await anew.next()?.index == 1, "followed from the start, the new log's events")
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
