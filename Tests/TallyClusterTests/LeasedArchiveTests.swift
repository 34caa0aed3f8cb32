import Foundation
import Testing
import TallyCluster
import TallyCore
import TallyLog
import TallyTestSupport

/// A real log writer archiving through PostgreSQL (`LeasedArchive`): what a node acknowledges
/// is in PostgreSQL first, another node rebuilds the log byte for byte from it, and a writer
/// whose lease was taken over writes nothing more.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TALLY_TEST_POSTGRES (scripts/test starts a PostgreSQL)"))
struct LeasedArchiveTests {
    let ledger = "t-" + UUID().uuidString.lowercased()

    func openWriter(_ directory: String, archive: LeasedArchive, keys: String, origin: ReplicaID, localOnly: ReplicaID) throws -> LogWriter {
        var configuration = LogConfiguration()
        configuration.segmentSizeLimit = 2_048  // several segments, sealed as they fill
        configuration.archive = archive
        return try LogWriter(
            directory: directory, localOrigin: origin, localOnlyOrigin: localOnly, configuration: configuration, signingKeyPath: keys + "/replica.key")
    }

    func files(_ directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name.hasSuffix(".tseg") {
            files[name] = FileManager.default.contents(atPath: directory + "/" + name)
        }
        return files
    }

    @Test func anotherNodeRebuildsTheLogFromPostgreSQLAndTheFormerWriterIsFenced() async throws {
        let (log, keys, replica) = (TemporaryDirectory("tally-leased-a"), TemporaryDirectory("tally-leased-keys"), TemporaryDirectory("tally-leased-b"))
        let (origin, localOnly) = (ReplicaID.random(), ReplicaID.random())
        try await TestPostgres.withNodes(["a", "b"]) { nodes in
            let lease = try await nodes[0].takeLease(ledger, localEnd: nil, for: .seconds(3))
            let archive = LeasedArchive(nodes[0], lease: lease)
            // The writer blocks its thread on PostgreSQL's answer: never one of the cooperative threads.
            let writer = try await offTheCooperativeThreads { () throws -> LogWriter in
                let writer = try openWriter(log.path, archive: archive, keys: keys.path, origin: origin, localOnly: localOnly)
                for amount in 1...30 { try writer.append([SampleEvents.expenseCreate(amount: Int64(amount))]) }
                _ = try writer.appendBulk((0..<300).map { SampleEvents.expenseCreate(amount: Int64($0 + 100)) })
                return writer
            }
            #expect(try LogEnd.of(logDirectory: log.path) == (try await nodes[0].end(of: ledger)), "everything written is archived")

            // Node "b" replays the archive into an empty folder: the same log, byte for byte.
            var appends: [SegmentAppend] = []
            var end: LogEnd?
            while true {
                let page = try await nodes[1].appends(of: ledger, after: end, limit: 7)
                guard let last = page.last?.append else { break }
                appends += page.map(\.append)
                end = LogEnd(segment: last.segment, length: last.offset + last.bytes.count, sealed: last.seals)
            }
            try SegmentAppend.replay(appends, into: replica.path)
            #expect(try files(replica.path) == (try files(log.path)))
            #expect(try files(log.path).count > 2, "the test rolled segments")
            #expect(try LogVerifier.verify(directory: replica.path).findings.isEmpty)

            // "a" pauses past its lease; "b", caught up, takes the ledger over.
            try await Task.sleep(for: .milliseconds(3_300))
            let taken = try await nodes[1].takeLease(ledger, localEnd: try LogEnd.of(logDirectory: replica.path), for: .seconds(30))
            #expect(taken.epoch == lease.epoch + 1)
            let before = try files(log.path)
            await offTheCooperativeThreads {
                #expect {
                    try writer.append([SampleEvents.expenseCreate(amount: 999)])
                } throws: { error in
                    "\(error)".contains("no longer this node's")  // the writer stopped, saying why
                }
                writer.close()
            }
            #expect(try files(log.path) == before, "the fenced write reached neither PostgreSQL nor the disk")
            #expect(try await nodes[1].end(of: ledger) == (try LogEnd.of(logDirectory: replica.path)))
        }
    }
}
