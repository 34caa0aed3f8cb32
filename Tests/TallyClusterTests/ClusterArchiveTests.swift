import Foundation
import Logging
import PostgresNIO
import Testing
@testable import TallyCluster
import TallyLog

/// The PostgreSQL the tests use: `scripts/test` starts one (`scripts/postgres`) and names it here.
enum TestPostgres {
    static let url = ProcessInfo.processInfo.environment["TALLY_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }  // empty: none

    /// Runs `body` with one archive per node name, sharing one client, the tables made (in
    /// `database` if given, else the one `url` names).
    static func withNodes(_ nodes: [String], database: String? = nil, _ body: @Sendable ([ClusterArchive]) async throws -> Void) async throws {
        var text = try #require(url)
        if let database, let slash = text.lastIndex(of: "/") { text = String(text[...slash]) + database }
        let client = PostgresClient(configuration: try PostgresURL.configuration(text))
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            let archives = nodes.map { ClusterArchive(client: client, node: $0, logger: logger) }
            do {
                try await archives[0].migrate()
                try await body(archives)
            } catch {
                group.cancelAll()
                throw error
            }
            group.cancelAll()
        }
    }
}

/// `ClusterArchive` against a real PostgreSQL. Each test uses ledgers of its own.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TALLY_TEST_POSTGRES (scripts/test starts a PostgreSQL)"))
struct ClusterArchiveTests {
    /// A ledger name no other test uses.
    let ledger = "t-" + UUID().uuidString.lowercased()
    let first = SegmentFormat.fileName(firstIndex: 1)
    let second = SegmentFormat.fileName(firstIndex: 10)
    let header = SegmentFormat.fileHeaderSize

    func append(_ segment: String, _ offset: Int, _ count: Int, next: String? = nil, fill: UInt8 = 7) -> SegmentAppend {
        SegmentAppend(segment: segment, offset: offset, bytes: [UInt8](repeating: fill, count: count), nextSegment: next)
    }

    @Test func appendsAreArchivedInOrderAndReadBackFromWhereAnyLogEnds() async throws {
        try await TestPostgres.withNodes(["a"]) { nodes in
            let lease = try await nodes[0].takeLease(ledger, localEnd: nil, for: .seconds(30))
            #expect(lease.epoch == 1)
            try await nodes[0].archive([append(first, header, 10)], under: lease)
            try await nodes[0].archive([append(first, header + 10, 5)], under: lease)
            try await nodes[0].archive([append(first, header + 15, 3, next: second), append(second, header, 4)], under: lease)
            #expect(try await nodes[0].end(of: ledger) == LogEnd(segment: second, length: header + 4, sealed: false))
            let all = try await nodes[0].appends(of: ledger, after: nil)
            #expect(all.map { [$0.append.offset, $0.append.bytes.count] } == [[header, 10], [header + 10, 5], [header + 15, 3], [header, 4]])
            #expect(all.allSatisfy { $0.epoch == 1 })
            let fromMiddle = try await nodes[0].appends(of: ledger, after: LogEnd(segment: first, length: header + 10, sealed: false))
            #expect(fromMiddle.map(\.append.offset) == [header + 10, header + 15, header])
            let afterSeal = try await nodes[0].appends(of: ledger, after: LogEnd(segment: first, length: header + 18, sealed: true))
            #expect(afterSeal.map(\.append.segment) == [second])
            #expect(try await nodes[0].appends(of: ledger, after: LogEnd(segment: second, length: header + 4, sealed: false)).isEmpty)
        }
    }

    @Test func anAppendThatDoesNotFollowTheArchiveIsRefusedAndChangesNothing() async throws {
        try await TestPostgres.withNodes(["a"]) { nodes in
            let lease = try await nodes[0].takeLease(ledger, localEnd: nil, for: .seconds(30))
            for wrong in [append(second, header, 4), append(first, header + 1, 4)] {  // not the first segment's first bytes
                await #expect(throws: ClusterRefusal.self) { try await nodes[0].archive([wrong], under: lease) }
            }
            try await nodes[0].archive([append(first, header, 10)], under: lease)
            for wrong in [append(first, header + 11, 1), append(first, header + 5, 1), append(second, header, 1)] {  // a gap, an overlap, a segment not sealed
                await #expect(throws: ClusterRefusal.self) { try await nodes[0].archive([wrong], under: lease) }
            }
            // One write whose second append does not follow: the first is not kept either.
            await #expect(throws: ClusterRefusal.self) {
                try await nodes[0].archive([append(first, header + 10, 2), append(first, header + 20, 2)], under: lease)
            }
            try await nodes[0].archive([append(first, header + 10, 2, next: second)], under: lease)
            // Only the segment the seal named goes on: not a later one (indexes would be missing).
            await #expect(throws: ClusterRefusal.self) { try await nodes[0].archive([append(SegmentFormat.fileName(firstIndex: 90), header, 1)], under: lease) }
            await #expect(throws: ClusterRefusal.self) { try await nodes[0].archive([append(first, header + 12, 1)], under: lease) }  // sealed
            #expect(try await nodes[0].end(of: ledger) == LogEnd(segment: first, length: header + 12, sealed: true))
        }
    }

    @Test func appendsNoWriterMakesAreRefusedBeforePostgreSQLIsAsked() async throws {
        try await TestPostgres.withNodes(["a"]) { nodes in
            let lease = try await nodes[0].takeLease(ledger, localEnd: nil, for: .seconds(30))
            for bad in [append("../x", header, 1), append("1.tseg", header, 1), append(first, 0, 1), append(first, header, 0)] {
                await #expect(throws: ClusterRefusal.self, "\(bad.segment) \(bad.offset)") { try await nodes[0].archive([bad], under: lease) }
            }
            #expect(try await nodes[0].end(of: ledger) == nil)
        }
    }

    @Test func writersRacingForOnePositionLeaveExactlyOneAppend() async throws {
        try await TestPostgres.withNodes(["a"]) { nodes in
            let lease = try await nodes[0].takeLease(ledger, localEnd: nil, for: .seconds(30))
            let archived = await withTaskGroup(of: Bool.self) { group in
                for writer in 0..<16 {
                    group.addTask { (try? await nodes[0].archive([append(first, header, 3, fill: UInt8(writer))], under: lease)) != nil }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(archived == 1)
            #expect(try await nodes[0].appends(of: ledger, after: nil).count == 1)
        }
    }

    @Test func aRetriedWriteWhoseAnswerWasLostSucceedsOnce() async throws {
        try await TestPostgres.withNodes(["a"]) { nodes in
            let lease = try await nodes[0].takeLease(ledger, localEnd: nil, for: .seconds(30))
            let write = [append(first, header, 4), append(first, header + 4, 4)]
            try await nodes[0].archive(write, under: lease)
            try await nodes[0].archive(write, under: lease)  // the same write again: already there, fine
            await #expect(throws: ClusterRefusal.self) { try await nodes[0].archive([append(first, header, 4, fill: 9)], under: lease) }
            #expect(try await nodes[0].appends(of: ledger, after: nil).count == 1, "one write's appends that follow on are one")
        }
    }

    /// A write's appends that follow on in one segment are archived as one (a write is then one
    /// statement); across a seal they stay apart. Replayed, the same bytes either way.
    @Test func appendsThatFollowOnInOneSegmentAreArchivedAsOne() async throws {
        try await TestPostgres.withNodes(["a"]) { nodes in
            let lease = try await nodes[0].takeLease(ledger, localEnd: nil, for: .seconds(30))
            let write = [append(first, header, 4, fill: 1), append(first, header + 4, 6, fill: 2), append(first, header + 10, 2, next: second, fill: 3)]
            try await nodes[0].archive(write + [append(second, header, 3, fill: 4)], under: lease)
            let stored = try await nodes[0].appends(of: ledger, after: nil).map(\.append)
            #expect(stored.map { [$0.offset, $0.bytes.count] } == [[header, 12], [header, 3]])
            #expect(stored[0].bytes == [UInt8](repeating: 1, count: 4) + [UInt8](repeating: 2, count: 6) + [3, 3] && stored[0].nextSegment == second)
            #expect(ClusterArchive.coalesced([append(first, header, 1), append(first, header + 2, 1)]).count == 2, "a gap is not closed")
        }
    }

    @Test func aLiveLeaseIsNotTakenByAnotherNodeAndEveryTakeIsANewEpoch() async throws {
        try await TestPostgres.withNodes(["a", "b"]) { nodes in
            _ = try await nodes[0].takeLease(ledger, localEnd: nil, for: .seconds(30))
            await #expect(throws: ClusterRefusal.leaseHeld(ledger: ledger, owner: "a")) {
                _ = try await nodes[1].takeLease(ledger, localEnd: nil, for: .seconds(30))
            }
            let again = try await nodes[0].takeLease(ledger, localEnd: nil, for: .seconds(30))
            #expect(again.epoch == 2, "a node taking its lease again (restarted) fences what it replaces")
        }
    }

    @Test func aNodeBehindOrAheadOfTheArchiveCannotTakeALeaseEvenAnExpiredOne() async throws {
        try await TestPostgres.withNodes(["a", "b"]) { nodes in
            let lease = try await nodes[0].takeLease(ledger, localEnd: nil, for: .seconds(1))
            try await nodes[0].archive([append(first, header, 50)], under: lease)
            try await Task.sleep(for: .milliseconds(1_300))
            let archived = LogEnd(segment: first, length: header + 50, sealed: false)
            // An empty node (a new machine, a lost disk) must not win and serve its emptiness.
            await #expect(throws: ClusterRefusal.notCaughtUp(ledger: ledger, archived: archived, local: nil)) {
                _ = try await nodes[1].takeLease(ledger, localEnd: nil, for: .seconds(30))
            }
            // Nor one holding bytes never archived (written locally, the archive then refused).
            let ahead = LogEnd(segment: first, length: header + 70, sealed: false)
            await #expect(throws: ClusterRefusal.notCaughtUp(ledger: ledger, archived: archived, local: ahead)) {
                _ = try await nodes[1].takeLease(ledger, localEnd: ahead, for: .seconds(30))
            }
            let taken = try await nodes[1].takeLease(ledger, localEnd: archived, for: .seconds(30))
            #expect(taken == ClusterLease(ledger: ledger, node: "b", epoch: 2))
        }
    }

    @Test func aFormerOwnerIsFencedByTheEpochWhateverItsClockSays() async throws {
        try await TestPostgres.withNodes(["a", "b"]) { nodes in
            let old = try await nodes[0].takeLease(ledger, localEnd: nil, for: .seconds(1))
            try await nodes[0].archive([append(first, header, 5)], under: old)
            try await Task.sleep(for: .milliseconds(1_300))  // "a" paused past its lease
            let new = try await nodes[1].takeLease(ledger, localEnd: LogEnd(segment: first, length: header + 5, sealed: false), for: .seconds(30))
            #expect(new.epoch == old.epoch + 1)
            // "a" wakes up and goes on as if nothing happened: PostgreSQL refuses it.
            await #expect(throws: ClusterRefusal.fenced(ledger: ledger, epoch: old.epoch)) {
                try await nodes[0].archive([append(first, header + 5, 5)], under: old)
            }
            await #expect(throws: ClusterRefusal.fenced(ledger: ledger, epoch: old.epoch)) { try await nodes[0].renew(old, for: .seconds(30)) }
            try await nodes[0].release(old)  // a release of a lease taken over leaves the new owner's alone
            #expect(try await nodes[1].isHeld(new))
            try await nodes[1].archive([append(first, header + 5, 5)], under: new)
            #expect(try await nodes[1].appends(of: ledger, after: nil).map(\.epoch) == [old.epoch, new.epoch])
        }
    }

    @Test func aNodeRestartedUnderTheSameNameFencesTheProcessItReplaces() async throws {
        // Two archives named "a": the process that was paused, and the one started in its place.
        try await TestPostgres.withNodes(["a", "a"]) { nodes in
            let paused = try await nodes[0].takeLease(ledger, localEnd: nil, for: .seconds(30))
            try await nodes[0].archive([append(first, header, 5)], under: paused)
            let restarted = try await nodes[1].takeLease(ledger, localEnd: LogEnd(segment: first, length: header + 5, sealed: false), for: .seconds(30))
            #expect(restarted.epoch == paused.epoch + 1)
            await #expect(throws: ClusterRefusal.fenced(ledger: ledger, epoch: paused.epoch)) {
                try await nodes[0].archive([append(first, header + 5, 1)], under: paused)
            }
            try await nodes[1].archive([append(first, header + 5, 1)], under: restarted)
        }
    }

    /// Holds the lease row of `ledger` locked (as a takeover or a write of it does) in a
    /// transaction of `node` while `body` runs.
    func whileLocked<T: Sendable>(_ ledger: String, by node: ClusterArchive, _ body: @Sendable () async throws -> T) async throws -> T {
        let (locked, lockedNow) = AsyncStream.makeStream(of: Void.self)
        let (done, doneNow) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await node.transaction { connection in
                try await connection.query("SELECT 1 FROM tally_leases WHERE ledger = \(ledger) FOR UPDATE", logger: node.logger)
                lockedNow.yield()
                for await _ in done { break }
            }
        }
        for await _ in locked { break }
        let result = await Result { try await body() }
        doneNow.yield()
        try await holder.value
        return try result.get()
    }

    @Test func leasesRenewedTogetherLeaveOutThoseTakenOverGivenUpOrLocked() async throws {
        try await TestPostgres.withNodes(["a", "b"]) { nodes in
            let names = (0..<4).map { "\(ledger)-\($0)" }
            var leases: [ClusterLease] = []
            for name in names { leases.append(try await nodes[0].takeLease(name, localEnd: nil, for: .milliseconds(300))) }
            try await Task.sleep(for: .milliseconds(500))  // all expired, still "a"'s; "b" takes one, "a" gives one up
            let taken = try await nodes[1].takeLease(names[2], localEnd: nil, for: .seconds(30))
            try await nodes[0].release(leases[3])
            let asked = leases
            let renewed = try await whileLocked(names[1], by: nodes[1]) {
                try await answered("the renewal", within: .seconds(5)) { try await nodes[0].renewUnlocked(asked, for: .seconds(30)) }
            }
            #expect(renewed == [leases[0]: false], "the locked row, the lease taken over and the one given up are left out")
            #expect(try await nodes[0].renew(leases[1], for: .seconds(30)) == false, "renewed alone once its row is free")
            try await nodes[0].archive([append(first, header, 1)], under: leases[1])  // live again
            await #expect(throws: ClusterRefusal.fenced(ledger: names[2], epoch: leases[2].epoch)) { try await nodes[0].renew(leases[2], for: .seconds(30)) }
            await #expect(throws: ClusterRefusal.fenced(ledger: names[3], epoch: leases[3].epoch)) { try await nodes[0].renew(leases[3], for: .seconds(30)) }
            #expect(try await nodes[1].isHeld(taken), "the new owner's lease is untouched")
            // A lease named twice, or under another node's name, is renewed once or not at all.
            let other = ClusterLease(ledger: names[0], node: "b", epoch: leases[0].epoch)
            #expect(try await nodes[0].renewUnlocked([leases[0], leases[0], other], for: .seconds(30)) == [leases[0]: false])
        }
    }

    @Test func aNodesRenewalsGoTogetherAndALockedRowHoldsUpOnlyItsOwn() async throws {
        try await TestPostgres.withNodes(["a", "b"]) { nodes in
            let names = (0..<40).map { "\(ledger)-\($0)" }
            var leases: [ClusterLease] = []
            for name in names { leases.append(try await nodes[0].takeLease(name, localEnd: nil, for: .milliseconds(300))) }
            try await Task.sleep(for: .milliseconds(500))
            let lost = try await nodes[1].takeLease(names[7], localEnd: nil, for: .seconds(30))
            let renewals = LeaseRenewals(archive: nodes[0], duration: .seconds(30), limit: .seconds(5))
            let asked = leases
            let renewing = try await whileLocked(names[3], by: nodes[1]) {
                let renewing = asked.map { lease in Task { try await renewals.renew(lease) } }
                // Every other lease is answered while the row of names[3] stays locked.
                for index in asked.indices where index != 3 {
                    let outcome = await renewing[index].result
                    if index == 7 {
                        #expect(throws: ClusterRefusal.fenced(ledger: names[7], epoch: asked[7].epoch)) { try outcome.get() }
                    } else {
                        #expect((try? outcome.get()) == false, "\(names[index]): \(outcome)")
                    }
                }
                return renewing
            }
            #expect(try await renewing[3].value == false, "renewed once its row was free")
            #expect(renewals.statements.load(ordering: .relaxed) < 10, "asked at once, sent together (40 asked)")
            #expect(try await nodes[1].isHeld(lost))
            for lease in leases where lease.ledger != names[7] { #expect(try await nodes[0].isHeld(lease)) }
        }
    }

    @Test func anExpiredLeaseArchivesNothingUntilRenewedAndAReleasedOneIsFreeAtOnce() async throws {
        try await TestPostgres.withNodes(["a", "b"]) { nodes in
            let lease = try await nodes[0].takeLease(ledger, localEnd: nil, for: .milliseconds(200))
            try await Task.sleep(for: .milliseconds(400))
            await #expect(throws: ClusterRefusal.fenced(ledger: ledger, epoch: lease.epoch)) {
                try await nodes[0].archive([append(first, header, 1)], under: lease)
            }
            try await nodes[0].renew(lease, for: .seconds(30))  // nobody took it: still this node's
            try await nodes[0].archive([append(first, header, 1)], under: lease)

            try await nodes[0].release(lease)  // drained: "b" need not wait 30 s
            #expect(try await nodes[0].isHeld(lease) == false)
            let taken = try await nodes[1].takeLease(ledger, localEnd: LogEnd(segment: first, length: header + 1, sealed: false), for: .seconds(30))
            #expect(taken.epoch == lease.epoch + 1)
            #expect(try await nodes[1].leases().contains { $0.ledger == ledger && $0.owner == "b" && $0.live })
        }
    }

    /// A lease time set by hand to infinity (an operator's repair) is still a number the status
    /// can print, not a conversion that traps.
    @Test func aLeaseExpiringAtInfinityIsListedWithAFiniteExpiry() async throws {
        try await TestPostgres.withNodes(["a"]) { nodes in
            _ = try await nodes[0].takeLease(ledger, localEnd: nil, for: .seconds(30))
            try await nodes[0].client.query("UPDATE tally_leases SET expires_at = 'infinity' WHERE ledger = \(ledger)")
            let listed = try #require(try await nodes[0].leases().first { $0.ledger == ledger })
            #expect(listed.live && listed.expiresIn.isFinite && Int64(exactly: listed.expiresIn.rounded()) != nil)
        }
    }

    @Test func aNodeWithoutANameTakesNothing() async throws {
        try await TestPostgres.withNodes([""]) { nodes in
            await #expect(throws: ClusterRefusal.invalid("a node needs a name")) { _ = try await nodes[0].takeLease(ledger, localEnd: nil, for: .seconds(30)) }
        }
    }

    /// Segment names compare bytewise whatever the database's collation: in a Danish one "aa"
    /// sorts after "b0" (as "å"), which made the archive take …aa.tseg as its end after …b0.tseg
    /// and refuse the writer's next segment for good (found by a hostile review).
    @Test func segmentsKeepTheirOrderInADatabaseWithADanishCollation() async throws {
        try await TestPostgres.withNodes(["setup"]) { nodes in
            _ = try? await nodes[0].client.query(
                "CREATE DATABASE tally_danish TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'da' LOCALE 'C.UTF-8'")  // made by the first run
        }
        try await TestPostgres.withNodes(["a"], database: "tally_danish") { nodes in
            let (aa, b0) = (SegmentFormat.fileName(firstIndex: 0xaa), SegmentFormat.fileName(firstIndex: 0xb0))
            let lease = try await nodes[0].takeLease(ledger, localEnd: nil, for: .seconds(30))
            try await nodes[0].archive([append(first, header, 5, next: aa), append(aa, header, 5, next: b0), append(b0, header, 5)], under: lease)
            #expect(try await nodes[0].end(of: ledger) == LogEnd(segment: b0, length: header + 5, sealed: false))
            #expect(try await nodes[0].appends(of: ledger, after: nil).map(\.append.segment) == [first, aa, b0])
            try await nodes[0].archive([append(b0, header + 5, 5)], under: lease)
        }
    }

    /// Found by review: a session that went silent inside a transaction (its host gone after
    /// a `FOR UPDATE` of a lease row) held that row until TCP's keepalive gave up, about two
    /// hours. Every transaction of the archive is ended by PostgreSQL after 30 s idle — set
    /// with its `BEGIN`, not as a startup parameter, which PgBouncer refuses.
    @Test func aTransactionLeftIdleIsEndedByPostgreSQL() async throws {
        try await TestPostgres.withNodes(["a"]) { nodes in
            let shown = try await nodes[0].transaction { connection in
                var shown: [String] = []
                for try await value in try await connection.query("SHOW idle_in_transaction_session_timeout", logger: nodes[0].logger).decode(String.self) {
                    shown.append(value)
                }
                return shown
            }
            #expect(shown == [ClusterArchive.idleInTransaction], "\(shown)")
            var outside: [String] = []
            for try await value in try await nodes[0].client.query("SHOW idle_in_transaction_session_timeout", logger: nodes[0].logger).decode(String.self) {
                outside.append(value)
            }
            #expect(outside == ["0"], "the session's own setting is left as the server has it: \(outside)")
        }
    }

    /// PostgresNIO keeps a prepare that failed on a connection failed for that connection's
    /// life, without asking the server again (found by a hostile review: one prepare cancelled
    /// while it waited on a lock left the pool's connection refusing every write after). A
    /// node with one connection, whose first prepare is cancelled, still archives what follows.
    /// In a database of its own: the table is locked for a moment.
    @Test func aPrepareCancelledOnAConnectionDoesNotStopTheWritesThatFollow() async throws {
        try await TestPostgres.withNodes(["setup"]) { nodes in _ = try? await nodes[0].client.query("CREATE DATABASE tally_prepare") }
        try await TestPostgres.withNodes(["locker"], database: "tally_prepare") { lockers in
            var text = try #require(TestPostgres.url)
            text = String(text[...text.lastIndex(of: "/")!]) + "tally_prepare"
            var configuration = try PostgresURL.configuration(text)
            configuration.options.maximumConnections = 1
            let single = PostgresClient(configuration: configuration)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await single.run() }
                defer { group.cancelAll() }
                let node = ClusterArchive(client: single, node: "a", logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
                let lease = try await node.takeLease(ledger, localEnd: nil, for: .seconds(60))
                // The first prepare of the insert waits on a lock, and is cancelled there.
                let wasCancelled = try await lockers[0].client.withConnection { locker in
                    try await locker.query("BEGIN", logger: lockers[0].logger)
                    try await locker.query("LOCK TABLE tally_appends IN ACCESS EXCLUSIVE MODE", logger: lockers[0].logger)
                    let write = Task { try? await node.archive([append(first, header, 5)], under: lease) }
                    var cancelled = false
                    for _ in 0..<100 where !cancelled {
                        for try await done in try await locker.query(
                            """
                            SELECT pg_cancel_backend(pid) FROM pg_stat_activity
                            WHERE datname = 'tally_prepare' AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'
                            """, logger: lockers[0].logger
                        ).decode(Bool.self) {
                            cancelled = cancelled || done
                        }
                        if !cancelled { try await Task.sleep(for: .milliseconds(50)) }
                    }
                    try await locker.query("COMMIT", logger: lockers[0].logger)
                    _ = await write.value
                    return cancelled
                }
                #expect(wasCancelled, "the prepare was found waiting and cancelled")
                // Whatever became of that write, the ones after it are archived, on the same connection.
                for _ in 0..<3 {
                    let end = try await node.end(of: ledger)
                    try await node.archive([append(first, end?.length ?? header, 5)], under: lease)
                }
                #expect(try await node.end(of: ledger)?.length ?? 0 >= header + 15)
            }
        }
    }

    @Test func clusterURLsAreCheckedBeforeAnyConnection() throws {
        for bad in [
            "", "postgres:", "http://tally@127.0.0.1/tally", "postgres://127.0.0.1/tally", "postgres://tally@/tally",
            "postgres://tally@127.0.0.1:5432/", "postgres://tally@127.0.0.1:0/tally", "postgres://tally@127.0.0.1/tally?sslmode=disable",
            "postgres://tally@127.0.0.1/a/b", "postgres://tally@127.0.0.1:99999/tally",
        ] {
            #expect(throws: PostgresURL.Invalid.self, "\(bad)") { _ = try PostgresURL.configuration(bad) }
        }
        #expect(throws: Never.self) { _ = try PostgresURL.configuration("postgres://tally:secret@127.0.0.1:5433/tally") }
    }
}
