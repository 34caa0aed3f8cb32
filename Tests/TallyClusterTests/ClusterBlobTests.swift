import Crypto
import Foundation
import NIOCore
import Testing
import TallyCluster
import TallyCore
import TallyLog
import TallyTestSupport

/// Attachments in the cluster's PostgreSQL (`ClusterArchive+Blobs`, `LeasedArchive` as a
/// `BlobArchive`). Each test uses a ledger of its own.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TALLY_TEST_POSTGRES (scripts/test starts a PostgreSQL)"))
struct ClusterBlobTests {
    let ledger = "b-" + UUID().uuidString.lowercased()
    let receipt = Array("a receipt, scanned".utf8)
    var digest: String { Self.digest(receipt) }

    static func digest(_ bytes: [UInt8]) -> String { Hex.lowercase(SHA256.hash(data: bytes)) }

    /// Registers `ledger` in the cluster (blobs belong to a registered ledger) and takes its lease on `node`.
    static func registered(_ ledger: String, leasedBy node: ClusterArchive) async throws -> ClusterLease {
        try await node.register(ledger, files: [:])
        return try await node.takeLease(ledger, localEnd: nil, for: .seconds(30))
    }

    @Test func aBlobIsStoredOnceUnderTheLeaseAndReadByAnyNode() async throws {
        let (ledger, receipt, digest) = (ledger, receipt, digest)
        try await TestPostgres.withNodes(["a", "b"]) { nodes in
            let lease = try await Self.registered(ledger, leasedBy: nodes[0])
            try await nodes[0].storeBlob(digest, bytes: ByteBuffer(bytes: receipt), under: lease)
            try await nodes[0].storeBlob(digest, bytes: ByteBuffer(bytes: receipt), under: lease)  // stored again: kept as it is
            #expect(try await nodes[1].blob(digest, of: ledger) == receipt)
            #expect(try await nodes[1].blob(Self.digest([1]), of: ledger) == nil)
            #expect(try await nodes[1].blob(digest, of: ledger + "-other") == nil, "a blob is its ledger's only")
            #expect(try await nodes[1].blobUsage()[ledger].map { [$0.count, Int($0.bytes)] } == [1, receipt.count])
            #expect(try await nodes[1].holdsBlob(digest, of: ledger))
            #expect(try await !nodes[1].holdsBlob(Self.digest([1]), of: ledger))
            #expect(try await nodes[1].blobs(of: ledger) == [BlobInfo(digest: digest, size: receipt.count)])
            #expect(try await nodes[1].blobBytes(of: ledger) == receipt.count)
            #expect(try await nodes[1].blobBytes(of: ledger + "-other") == 0)
            #expect(try await nodes[1].heldBlobs([digest, Self.digest([1])], of: ledger) == [digest])
            #expect(try await nodes[1].heldBlobs([digest], of: ledger + "-other") == [])
            #expect(try await nodes[1].heldBlobs([], of: ledger) == [])
        }
    }

    @Test func bytesThatDoNotHashToTheirNameAndNamesThatAreNotDigestsAreRefused() async throws {
        let (ledger, receipt) = (ledger, receipt)
        try await TestPostgres.withNodes(["a"]) { nodes in
            let lease = try await Self.registered(ledger, leasedBy: nodes[0])
            let named = Self.digest([1, 2, 3])
            await #expect(throws: (any Error).self, "PostgreSQL's check refuses them") {
                try await nodes[0].storeBlob(named, bytes: ByteBuffer(bytes: receipt), under: lease)
            }
            #expect(try await nodes[0].blob(named, of: ledger) == nil)
            for hostile in ["../../etc/passwd", String(repeating: "A", count: 64), "", String(repeating: "a", count: 10_000)] {
                await #expect(throws: ClusterRefusal.self) { try await nodes[0].storeBlob(hostile, bytes: ByteBuffer(bytes: receipt), under: lease) }
                await #expect(throws: ClusterRefusal.self) { _ = try await nodes[0].blob(hostile, of: ledger) }
            }
            #expect(try await nodes[0].blobUsage()[ledger] == nil)
        }
    }

    @Test func aFormerOwnerCanNeitherStoreNorRemoveABlob() async throws {
        let (ledger, receipt, digest) = (ledger, receipt, digest)
        try await TestPostgres.withNodes(["a", "b"]) { nodes in
            let former = try await Self.registered(ledger, leasedBy: nodes[0])
            try await nodes[0].storeBlob(digest, bytes: ByteBuffer(bytes: receipt), under: former)
            try await nodes[0].release(former)
            let current = try await nodes[1].takeLease(ledger, localEnd: nil, for: .seconds(30))
            let other = Array("another receipt".utf8)
            await #expect(throws: ClusterRefusal.fenced(ledger: ledger, epoch: former.epoch)) {
                try await nodes[0].storeBlob(Self.digest(other), bytes: ByteBuffer(bytes: other), under: former)
            }
            await #expect(throws: ClusterRefusal.fenced(ledger: ledger, epoch: former.epoch)) { try await nodes[0].removeBlob(digest, under: former) }
            #expect(try await nodes[1].blob(digest, of: ledger) == receipt)
            #expect(try await nodes[1].blob(Self.digest(other), of: ledger) == nil)
            try await nodes[1].removeBlob(digest, under: current)
            #expect(try await nodes[1].blob(digest, of: ledger) == nil)
        }
    }

    /// The blob store of a hosted ledger's node: a blob is archived before it is held, a node
    /// that lacks one brings it from the archive, and retention removes it from both.
    @Test func aNodesBlobStoreArchivesFirstAndFetchesWhatItLacks() async throws {
        let (ledger, receipt, digest) = (ledger, receipt, digest)
        let folders = (TemporaryDirectory("blobs-a"), TemporaryDirectory("blobs-b"))
        let (pathA, pathB) = (folders.0.path, folders.1.path)
        try await TestPostgres.withNodes(["a", "b"]) { nodes in
            let leaseA = try await Self.registered(ledger, leasedBy: nodes[0])
            let storeA = BlobStore(path: pathA + "/blobs", archive: LeasedArchive(nodes[0], lease: leaseA))
            let stored = try await Self.blocking { try storeA.store(Data(receipt)) }
            #expect(stored.digest == digest)
            #expect(try await nodes[1].blob(digest, of: ledger) == receipt, "archived by the time the store returned")
            try await nodes[0].release(leaseA)
            let leaseB = try await nodes[1].takeLease(ledger, localEnd: nil, for: .seconds(30))
            let storeB = BlobStore(path: pathB + "/blobs", archive: LeasedArchive(nodes[1], lease: leaseB))
            #expect(try storeB.size(of: digest) == nil)
            #expect(try await Self.blocking { try storeB.fetch(digest) } == receipt.count)
            #expect(try storeB.verify(digest), "brought from the archive and kept, whole")
            #expect(try await Self.blocking { try storeB.fetch(Self.digest([9])) } == nil)
            // The former owner can no longer archive: its store refuses, holding nothing new.
            let late = Array("late".utf8)
            await #expect(throws: LogError.self, "not archived: fenced") { _ = try await Self.blocking { try storeA.store(Data(late)) } }
            #expect(try storeA.size(of: Self.digest(late)) == nil)
            try await Self.blocking { try storeB.remove(digest) }
            #expect(try storeB.size(of: digest) == nil)
            #expect(try await nodes[1].blob(digest, of: ledger) == nil)
        }
    }

    /// Runs blocking work off Swift's cooperative threads (the archive waits for PostgreSQL).
    static func blocking<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result(catching: work)) }.start()
        }
    }
}
