import Foundation
import Logging
import PostgresNIO
import Testing
import TallyCluster

/// The PostgreSQL the tests use: `scripts/test` starts one (`scripts/postgres`) and names it here.
enum TestPostgres {
    static let url = ProcessInfo.processInfo.environment["TALLY_TEST_POSTGRES"]
}

/// `ClusterArchive` against a real PostgreSQL: the one `scripts/test` starts on loopback
/// (`scripts/postgres`) and names in `TALLY_TEST_POSTGRES`. Each test uses ledgers of its own.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TALLY_TEST_POSTGRES (scripts/test starts a PostgreSQL)"))
struct ClusterArchiveTests {
    /// A ledger name no other test uses.
    let ledger = "t-" + UUID().uuidString.lowercased()

    /// Runs `body` with one archive per node name, sharing one client, the tables made.
    func withNodes(_ nodes: [String], _ body: @Sendable ([ClusterArchive]) async throws -> Void) async throws {
        let client = PostgresClient(configuration: try PostgresURL.configuration(try #require(TestPostgres.url)))
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

    func archive(_ archive: ClusterArchive, _ first: UInt64, _ last: UInt64, _ lease: ClusterLease) async throws {
        try await archive.archive(
            first: first, last: last, events: Array("events \(first)-\(last)".utf8), lastHash: [UInt8](repeating: UInt8(last % 256), count: 32), under: lease)
    }

    @Test func batchesAreArchivedInOrderAndReadBackFromAnyIndex() async throws {
        try await withNodes(["a"]) { nodes in
            let lease = try await nodes[0].takeLease(ledger, localIndex: 0, for: .seconds(30))
            #expect(lease.epoch == 1)
            try await archive(nodes[0], 1, 3, lease)
            try await archive(nodes[0], 4, 4, lease)
            #expect(try await nodes[0].lastIndex(of: ledger) == 4)
            let all = try await nodes[0].batches(of: ledger, after: 0)
            #expect(all.map { [$0.firstIndex, $0.lastIndex] } == [[1, 3], [4, 4]])
            #expect(all.allSatisfy { $0.epoch == 1 })
            #expect(all[0].events == Array("events 1-3".utf8) && all[0].lastHash == [UInt8](repeating: 3, count: 32))
            #expect(try await nodes[0].batches(of: ledger, after: 3).map(\.firstIndex) == [4])
            #expect(try await nodes[0].batches(of: ledger, after: 4).isEmpty)
        }
    }

    @Test func aBatchThatDoesNotFollowTheArchiveIsRefusedAndChangesNothing() async throws {
        try await withNodes(["a"]) { nodes in
            let lease = try await nodes[0].takeLease(ledger, localIndex: 0, for: .seconds(30))
            await #expect(throws: ClusterRefusal.notNext(ledger: ledger, expected: 1, got: 2)) { try await archive(nodes[0], 2, 2, lease) }
            try await archive(nodes[0], 1, 2, lease)
            await #expect(throws: ClusterRefusal.notNext(ledger: ledger, expected: 3, got: 1)) { try await archive(nodes[0], 1, 1, lease) }
            await #expect(throws: ClusterRefusal.notNext(ledger: ledger, expected: 3, got: 4)) { try await archive(nodes[0], 4, 5, lease) }
            await #expect(throws: ClusterRefusal.self) { try await nodes[0].archive(first: 3, last: 2, events: [], lastHash: [], under: lease) }
            #expect(try await nodes[0].batches(of: ledger, after: 0).map(\.lastIndex) == [2])
        }
    }

    @Test func writersRacingForOneIndexLeaveExactlyOneBatch() async throws {
        try await withNodes(["a"]) { nodes in
            let lease = try await nodes[0].takeLease(ledger, localIndex: 0, for: .seconds(30))
            let archived = await withTaskGroup(of: Bool.self) { group in
                for writer in 0..<16 {
                    group.addTask {
                        (try? await nodes[0].archive(first: 1, last: 1, events: [UInt8(writer)], lastHash: [UInt8(writer)], under: lease)) != nil
                    }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(archived == 1)
            #expect(try await nodes[0].batches(of: ledger, after: 0).count == 1)
        }
    }

    @Test func aRetriedArchiveWhoseAnswerWasLostSucceedsOnce() async throws {
        try await withNodes(["a"]) { nodes in
            let lease = try await nodes[0].takeLease(ledger, localIndex: 0, for: .seconds(30))
            try await archive(nodes[0], 1, 2, lease)
            try await archive(nodes[0], 1, 2, lease)  // the same batch again: already there, fine
            await #expect(throws: ClusterRefusal.notNext(ledger: ledger, expected: 3, got: 1)) {
                try await nodes[0].archive(first: 1, last: 2, events: [9], lastHash: [9], under: lease)  // not the same batch
            }
            #expect(try await nodes[0].batches(of: ledger, after: 0).count == 1)
        }
    }

    @Test func aNodeRestartedUnderTheSameNameFencesTheProcessItReplaces() async throws {
        // Two archives named "a": the process that was paused, and the one started in its place.
        try await withNodes(["a", "a"]) { nodes in
            let paused = try await nodes[0].takeLease(ledger, localIndex: 0, for: .seconds(30))
            try await archive(nodes[0], 1, 1, paused)
            let restarted = try await nodes[1].takeLease(ledger, localIndex: 1, for: .seconds(30))
            #expect(restarted.epoch == paused.epoch + 1)
            await #expect(throws: ClusterRefusal.fenced(ledger: ledger, epoch: paused.epoch)) { try await archive(nodes[0], 2, 2, paused) }
            try await archive(nodes[1], 2, 2, restarted)
        }
    }

    @Test func aNodeWithoutANameTakesNothing() async throws {
        try await withNodes([""]) { nodes in
            await #expect(throws: ClusterRefusal.invalid("a node needs a name")) { _ = try await nodes[0].takeLease(ledger, localIndex: 0, for: .seconds(30)) }
        }
    }

    @Test func aLiveLeaseIsNotTakenByAnotherNode() async throws {
        try await withNodes(["a", "b"]) { nodes in
            _ = try await nodes[0].takeLease(ledger, localIndex: 0, for: .seconds(30))
            await #expect(throws: ClusterRefusal.leaseHeld(ledger: ledger, owner: "a")) {
                _ = try await nodes[1].takeLease(ledger, localIndex: 0, for: .seconds(30))
            }
            let again = try await nodes[0].takeLease(ledger, localIndex: 0, for: .seconds(30))
            #expect(again.epoch == 2, "a node taking its lease again (restarted) fences what it replaces")
        }
    }

    @Test func aNodeBehindOrAheadOfTheArchiveCannotTakeALeaseEvenAnExpiredOne() async throws {
        try await withNodes(["a", "b"]) { nodes in
            let lease = try await nodes[0].takeLease(ledger, localIndex: 0, for: .seconds(1))
            try await archive(nodes[0], 1, 5, lease)
            try await Task.sleep(for: .milliseconds(1_300))
            // An empty node (a new machine, a lost disk) must not win and serve its emptiness.
            await #expect(throws: ClusterRefusal.notCaughtUp(ledger: ledger, archived: 5, local: 0)) {
                _ = try await nodes[1].takeLease(ledger, localIndex: 0, for: .seconds(30))
            }
            // Nor one holding events never archived (written locally, the archive then refused).
            await #expect(throws: ClusterRefusal.notCaughtUp(ledger: ledger, archived: 5, local: 7)) {
                _ = try await nodes[1].takeLease(ledger, localIndex: 7, for: .seconds(30))
            }
            let taken = try await nodes[1].takeLease(ledger, localIndex: 5, for: .seconds(30))
            #expect(taken == ClusterLease(ledger: ledger, node: "b", epoch: 2))
        }
    }

    @Test func aFormerOwnerIsFencedByTheEpochWhateverItsClockSays() async throws {
        try await withNodes(["a", "b"]) { nodes in
            let old = try await nodes[0].takeLease(ledger, localIndex: 0, for: .seconds(1))
            try await archive(nodes[0], 1, 1, old)
            try await Task.sleep(for: .milliseconds(1_300))  // "a" paused past its lease
            let new = try await nodes[1].takeLease(ledger, localIndex: 1, for: .seconds(30))
            #expect(new.epoch == old.epoch + 1)
            // "a" wakes up and goes on as if nothing happened: PostgreSQL refuses it.
            await #expect(throws: ClusterRefusal.fenced(ledger: ledger, epoch: old.epoch)) { try await archive(nodes[0], 2, 2, old) }
            await #expect(throws: ClusterRefusal.fenced(ledger: ledger, epoch: old.epoch)) { try await nodes[0].renew(old, for: .seconds(30)) }
            try await nodes[0].release(old)  // a release of a lease taken over leaves the new owner's alone
            #expect(try await nodes[1].isHeld(new))
            try await archive(nodes[1], 2, 2, new)
            #expect(try await nodes[1].batches(of: ledger, after: 0).map(\.epoch) == [old.epoch, new.epoch])
        }
    }

    @Test func anExpiredLeaseArchivesNothingUntilRenewedAndAReleasedOneIsFreeAtOnce() async throws {
        try await withNodes(["a", "b"]) { nodes in
            let lease = try await nodes[0].takeLease(ledger, localIndex: 0, for: .milliseconds(200))
            try await Task.sleep(for: .milliseconds(400))
            await #expect(throws: ClusterRefusal.fenced(ledger: ledger, epoch: lease.epoch)) { try await archive(nodes[0], 1, 1, lease) }
            try await nodes[0].renew(lease, for: .seconds(30))  // nobody took it: still this node's
            try await archive(nodes[0], 1, 1, lease)

            try await nodes[0].release(lease)  // drained: "b" need not wait 30 s
            #expect(try await nodes[0].isHeld(lease) == false)
            let taken = try await nodes[1].takeLease(ledger, localIndex: 1, for: .seconds(30))
            #expect(taken.epoch == lease.epoch + 1)
            #expect(try await nodes[1].leases().contains { $0.ledger == ledger && $0.owner == "b" && $0.live })
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
