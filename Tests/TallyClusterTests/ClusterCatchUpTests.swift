import Foundation
import Testing
import TallyCluster
import TallyCore
import TallyLog
import TallyTestSupport

/// `ClusterCatchUp` against a real PostgreSQL: a node's log of a ledger brought to where the
/// archive ends — from nothing, from a torn write — and refused when it holds what the archive
/// never had.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TALLY_TEST_POSTGRES (scripts/test starts a PostgreSQL)"))
struct ClusterCatchUpTests {
    let ledger = "t-" + UUID().uuidString.lowercased()

    /// Writes `count` single appends and one bulk append to a log archived under a new lease of
    /// node `archive`, in `directory`; returns the lease.
    func writeArchived(_ count: Int, into directory: String, keys: String, archive: ClusterArchive) async throws -> ClusterLease {
        let lease = try await archive.takeLease(ledger, localEnd: nil, for: .seconds(30))
        try await offTheCooperativeThreads {
            var configuration = LogConfiguration()
            configuration.segmentSizeLimit = 4_096  // several segments
            configuration.archive = LeasedArchive(archive, lease: lease)
            let writer = try LogWriter(
                directory: directory, localOrigin: ReplicaID.random(), localOnlyOrigin: ReplicaID.random(), configuration: configuration,
                signingKeyPath: keys + "/replica.key")
            for amount in 1...count { try writer.append([SampleEvents.expenseCreate(amount: Int64(amount))]) }
            _ = try writer.appendBulk((0..<200).map { SampleEvents.expenseCreate(amount: Int64($0 + 10_000)) })
            writer.close()
        }
        return lease
    }

    func segments(_ directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name.hasSuffix(".tseg") {
            files[name] = FileManager.default.contents(atPath: directory + "/" + name)
        }
        return files
    }

    func catchUp(_ archive: ClusterArchive) -> ClusterCatchUp {
        ClusterCatchUp(archive: archive) { work in try await offTheCooperativeThreads { try work() } }
    }

    @Test func aNodeWithNothingCatchesUpPageByPageThenTakesTheLease() async throws {
        let (log, keys, copy) = (TemporaryDirectory("tally-catchup-a"), TemporaryDirectory("tally-catchup-keys"), TemporaryDirectory("tally-catchup-b"))
        try await TestPostgres.withNodes(["a", "b"]) { nodes in
            let lease = try await writeArchived(300, into: log.path, keys: keys.path, archive: nodes[0])
            let report = try await catchUp(nodes[1]).catchUp(ledger, logDirectory: copy.path)
            #expect(report.appends > 256, "more than one page")
            #expect(report.cut == 0)
            #expect(report.end == (try await nodes[1].end(of: ledger)))
            #expect(try segments(copy.path) == (try segments(log.path)))
            // Nothing more to do the second time; and the lease is "b"'s once "a"'s ran out.
            #expect(try await catchUp(nodes[1]).catchUp(ledger, logDirectory: copy.path).appends == 0)
            try await nodes[0].release(lease)
            let taken = try await nodes[1].takeLease(ledger, localEnd: report.end, for: .seconds(30))
            #expect(taken.epoch == lease.epoch + 1)
        }
    }

    @Test func aLogEndingInsideAnArchivedWriteIsCutBackToItsStartAndTheWriteReplayedWhole() async throws {
        let (log, keys, copy) = (TemporaryDirectory("tally-catchup-a"), TemporaryDirectory("tally-catchup-keys"), TemporaryDirectory("tally-catchup-c"))
        try await TestPostgres.withNodes(["a", "c"]) { nodes in
            let lease = try await writeArchived(20, into: log.path, keys: keys.path, archive: nodes[0])
            try await nodes[0].release(lease)
            // The same log archived under another name with its last two writes as one (one
            // write of several frames, as a bulk append over the frame limit is) ...
            let all = try await nodes[0].appends(of: ledger, after: nil, limit: 10_000).map(\.append)
            let (first, second) = (all[all.count - 2], all[all.count - 1])
            try #require(first.segment == second.segment && !first.seals)
            let other = ledger + "-merged"
            let otherLease = try await nodes[0].takeLease(other, localEnd: nil, for: .seconds(30))
            for append in all.dropLast(2) { try await nodes[0].archive([append], under: otherLease) }  // write by write, as they were
            let merged = SegmentAppend(segment: first.segment, offset: first.offset, bytes: first.bytes + second.bytes, nextSegment: second.nextSegment)
            try await nodes[0].archive([merged], under: otherLease)
            // ... and "c" holds that log torn after the write's first frame.
            for (name, bytes) in try segments(log.path) { try bytes.write(to: URL(fileURLWithPath: copy.path + "/" + name)) }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: copy.path + "/" + first.segment))
            try handle.truncate(atOffset: UInt64(first.offset + first.bytes.count))
            try handle.close()
            let report = try await catchUp(nodes[1]).catchUp(other, logDirectory: copy.path)
            #expect(report.cut == first.bytes.count, "cut back to where the archived write starts")
            #expect(report.appends == 1, "the write replayed whole")
            #expect(try segments(copy.path) == (try segments(log.path)))
        }
    }

    @Test func aLogHoldingWhatTheArchiveNeverHadIsDivergedAndLeftAsItIs() async throws {
        let (log, keys, other) = (TemporaryDirectory("tally-catchup-a"), TemporaryDirectory("tally-catchup-keys"), TemporaryDirectory("tally-catchup-d"))
        try await TestPostgres.withNodes(["a", "d"]) { nodes in
            let lease = try await writeArchived(20, into: log.path, keys: keys.path, archive: nodes[0])
            try await nodes[0].release(lease)
            // Another replica's log in the same place (events the archive never saw).
            try await offTheCooperativeThreads {
                let writer = try LogWriter(directory: other.path, localOrigin: ReplicaID.random(), localOnlyOrigin: ReplicaID.random())
                for amount in 1...5 { try writer.append([SampleEvents.expenseCreate(amount: Int64(amount))]) }
                writer.close()
            }
            let before = try segments(other.path)
            await #expect(throws: ClusterCatchUpError.self) { _ = try await catchUp(nodes[1]).catchUp(ledger, logDirectory: other.path) }
            #expect(try segments(other.path) == before, "nothing written over it")
            await #expect {
                _ = try await nodes[1].takeLease(ledger, localEnd: try LogEnd.of(logDirectory: other.path), for: .seconds(30))
            } throws: { error in
                if case ClusterRefusal.notCaughtUp = error { return true } else { return false }
            }
        }
    }
}
