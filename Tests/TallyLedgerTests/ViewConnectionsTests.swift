import Foundation
import Synchronization
import Testing
import TallyCore
@testable import TallyLedger
import TallyLog
@testable import TallyStore
import TallyTestSupport

/// How many connections to its views a ledger opens to serve a first write and run its own
/// background round: each new connection parses the views' whole schema (~0.5 ms), and a
/// hosted ledger is opened again all day. Before this, the write's group commit and the
/// background round read the views' checkpoint through GRDB's reader pool, which opened a
/// third connection for that one number. What the ledger knows in memory of where its views
/// stand (`projectedIndex`, which these reads gave way to) is held to them here too.
@Suite struct ViewConnectionsTests {
    let folder = TemporaryDirectory("tally-view-connections")

    /// The descriptors this process holds on the views' database file: one per connection.
    private func connections(to directory: DataDirectory) throws -> Int {
        let path = URL(fileURLWithPath: try #require(ProjectionDatabase.currentPath(directory))).resolvingSymlinksInPath().path
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        return descriptors.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == path }.count
    }

    @Test func aReopenedLedgerWritesAndRunsItsRoundOnTwoConnections() async throws {
        let directory = try DataDirectory.create(path: folder.file("ledger"), name: "ledger")
        let first = try Ledger(directory: directory)
        for amount in 1...3 { _ = try await first.create(.expense, [.amount: .int(Int64(amount))], actor: "t") }
        first.close()

        let ledger = try Ledger(directory: directory)
        defer { ledger.close() }
        #expect(ledger.projectedIndex == 3, "known from the open, without a read")
        _ = try await ledger.create(.expense, [.amount: .int(4)], actor: "t")
        #expect(try await ledger.materializeRecurrences() == 0)
        #expect(try ledger.takeSnapshotIfDue(SnapshotPolicy()) == nil)
        #expect(ledger.projectedIndex == 4)
        let open = try connections(to: directory)
        #expect(open == 2, "the views' writer, and one reader for the write's checks (\(open) open)")
        #expect(try ledger.views.projectedIndex() == 4)
    }

    /// A hosted ledger (`ViewConnections.few`) reads a write's checks and the entity it
    /// answers with on the views' writer while no reader is idle: one that is only written
    /// opens one connection. A read of its own opens a reader, kept while idle; a write after
    /// it opens no other.
    @Test func aHostedLedgerOnlyWrittenOpensOneConnection() async throws {
        let directory = try DataDirectory.create(path: folder.file("hosted"), name: "hosted")
        let first = try Ledger(directory: directory, viewConnections: .few)
        for amount in 1...3 { _ = try await first.create(.expense, [.amount: .int(Int64(amount))], actor: "t") }
        first.close()

        let ledger = try Ledger(directory: directory, viewConnections: .few)
        defer { ledger.close() }
        let (written, _) = try await ledger.create(.expense, [.amount: .int(4)], actor: "t")
        #expect(written.member("amount") == .int(4), "the answer, read back on the writer")
        #expect(try await ledger.materializeRecurrences() == 0)
        let onlyWritten = try connections(to: directory)
        #expect(onlyWritten == 1, "the views' writer alone (\(onlyWritten) open)")

        #expect(try ledger.views.expenses(ExpenseQuery([("limit", "10")])).rows.count == 4)
        #expect(try connections(to: directory) == 2, "a read opens a reader, kept while idle")
        _ = try await ledger.create(.expense, [.amount: .int(5)], actor: "t")
        #expect(try connections(to: directory) == 2, "the next write opens no other")
        #expect(try ledger.views.expenses(ExpenseQuery([("limit", "10")])).rows.count == 5)
    }

    /// While the writer projects (a catch-up's many commits: a delivery of a million events
    /// projects for seconds), a write's reads do not wait for it on one of the few threads
    /// requests run on: they open a reader. (Had the read queued on the writer, the
    /// holder below would have waited out its ten seconds.)
    @Test func aWritesReadsOpenAReaderWhileTheWriterIsHeldLong() async throws {
        let directory = try DataDirectory.create(path: folder.file("held"), name: "held")
        let ledger = try Ledger(directory: directory, viewConnections: .few)
        defer { ledger.close() }
        let (written, _) = try await ledger.create(.expense, [.amount: .int(1)], actor: "t")
        guard case .string(let text)? = written.member("id"), let id = UUID(uuidString: text) else {
            Issue.record("no id")
            return
        }
        #expect(try connections(to: directory) == 1)

        let views = ledger.projector.views
        let (holding, released, done) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let waitedOut = Mutex(false)
        DispatchQueue.global().async {
            views.writing {
                try? views.pool.writeWithoutTransaction { _ in
                    holding.signal()
                    if released.wait(timeout: .now() + 10) == .timedOut { waitedOut.withLock { $0 = true } }
                }
            }
            done.signal()
        }
        try #require(holding.wait(timeout: .now() + 10) == .success, "the writer held")
        let read = try Views.readingForAWrite { try ledger.views.entityJSON(.expense, id: id) }
        released.signal()
        done.wait()
        #expect(read?.member("amount") == .int(1))
        #expect(!waitedOut.withLock { $0 }, "the read did not wait for the writer")
        #expect(try connections(to: directory) == 2, "a reader opened for it, kept while idle")
    }

    /// A ledger with rules whose days are all decided already (most opens of a household's
    /// ledger): its pass opens no lookup, so no reader of the pool either.
    @Test func aPassWithEveryDayDecidedOpensNoConnection() async throws {
        let directory = try DataDirectory.create(path: folder.file("rules"), name: "rules")
        let now = DateTime(iso8601: "2030-01-03T12:00:00+09:00")!
        let first = try Ledger(directory: directory)
        _ = try await first.create(
            .recurring, [.cadence: .string("daily"), .startDate: .dateTime(DateTime(iso8601: "2030-01-01T08:30:00+09:00")!), .amount: .int(1_000)],
            actor: "t")
        #expect(try await first.materializeRecurrences(now: now) == 3)
        first.close()

        let ledger = try Ledger(directory: directory)
        defer { ledger.close() }
        _ = try await ledger.create(.expense, [.amount: .int(4)], actor: "t")
        #expect(try await ledger.materializeRecurrences(now: now) == 0)
        let open = try connections(to: directory)
        #expect(open == 2, "the views' writer, and one reader for the write's checks and the rules (\(open) open)")
        #expect(try ledger.views.expenses(ExpenseQuery([("limit", "10")])).rows.count == 4)
    }

    /// Views found ahead of a shorter log at open (a log restored from an older copy) are
    /// rebuilt at the log's end: what the ledger knows of them in memory follows them down, so
    /// the next writes, at indexes the old views had passed, are projected.
    @Test func viewsFoundAheadOfTheLogAreKnownAtTheLogsEnd() async throws {
        let directory = try DataDirectory.create(path: folder.file("ahead"), name: "ahead")
        let first = try Ledger(directory: directory)
        for amount in 1...2 { _ = try await first.create(.expense, [.amount: .int(Int64(amount))], actor: "t") }
        first.close()
        let olderLog = folder.file("older-log")
        try FileManager.default.copyItem(atPath: directory.logPath, toPath: olderLog)
        let second = try Ledger(directory: directory)
        for amount in 3...5 { _ = try await second.create(.expense, [.amount: .int(Int64(amount))], actor: "t") }
        second.close()
        try FileManager.default.removeItem(atPath: directory.logPath)
        try FileManager.default.copyItem(atPath: olderLog, toPath: directory.logPath)

        let ledger = try Ledger(directory: directory)
        defer { ledger.close() }
        #expect(ledger.projectedIndex == 2, "the views rebuilt at the log's end, not the 5 they had shown")
        for amount in 6...7 { _ = try await ledger.create(.expense, [.amount: .int(Int64(amount))], actor: "t") }
        #expect(ledger.projectedIndex == 4)
        #expect(try ledger.views.expenses(ExpenseQuery([("limit", "10")])).rows.count == 4)
    }

    @Test func aSnapshotIsTakenWhenTheViewsInMemoryArePastThePolicy() async throws {
        let directory = try DataDirectory.create(path: folder.file("snapshots"), name: "snapshots")
        let ledger = try Ledger(directory: directory)
        defer { ledger.close() }
        for amount in 1...3 { _ = try await ledger.create(.expense, [.amount: .int(Int64(amount))], actor: "t") }
        #expect(try ledger.takeSnapshotIfDue(SnapshotPolicy(every: 4)) == nil)
        _ = try await ledger.create(.expense, [.amount: .int(4)], actor: "t")
        #expect(try ledger.takeSnapshotIfDue(SnapshotPolicy(every: 4))?.index == 4)
        #expect(try ledger.takeSnapshotIfDue(SnapshotPolicy(every: 4)) == nil, "not due again until four more events")
    }
}
