import Crypto
import Foundation
import Synchronization
import Testing
import TallyCore
import TallyLedger
import TallyLog
import TallyTestSupport

/// A hosted ledger's attachments with an archive (a cluster's PostgreSQL, here in memory): a
/// blob is archived before it is held, one held only here is archived when uploaded or attached
/// again, a missing one is brought back, the quota counts what the archive holds, and
/// retention removes what only the archive holds. (Against PostgreSQL: `ClusterBlobTests`.)
@Suite struct ArchivedBlobTests {
    let folder = TemporaryDirectory("tally-archived-blobs")

    /// The archive: blobs by digest; set `failing` to refuse every store.
    final class MemoryArchive: LedgerArchive {
        let held = Mutex<[String: [UInt8]]>([:])
        let failing = Mutex(false)
        let maxBlobBytes = 1 << 20
        struct Refused: Error {}

        func archive(_ appends: [SegmentAppend]) throws {}
        func archive(blob digest: String, file: String) throws {
            guard !failing.withLock({ $0 }) else { throw Refused() }
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
            held.withLock { $0[digest] = bytes }
        }
        func holds(blob digest: String) throws -> Bool { held.withLock { $0[digest] != nil } }
        func bytes(ofBlob digest: String) throws -> [UInt8]? { held.withLock { $0[digest] } }
        func blobs() throws -> [BlobInfo] { held.withLock { $0.map { BlobInfo(digest: $0.key, size: $0.value.count) } } }
        func remove(blob digest: String) throws { held.withLock { $0[digest] = nil } }
    }

    func expense(attaching digest: String) -> PropertyMap {
        [.kind: .string("expense"), .amount: .int(100), .currency: .string("KRW"), .attachments: .strings([digest])]
    }

    @Test func aBlobIsArchivedBeforeItIsHeldAndBroughtBackWhereItIsMissing() async throws {
        let archive = MemoryArchive()
        let ledger = try Ledger(directory: try DataDirectory.create(path: folder.file("a"), name: "a"), archive: archive)
        defer { ledger.close() }
        let receipt = Data(AttachmentTests.jpeg(3_000))
        archive.failing.withLock { $0 = true }
        do {
            _ = try ledger.blobs.store(receipt)
            Issue.record("stored although the archive refused it")
        } catch LogError.notArchived {
            // a 503 over HTTP, as for the log's bytes
        }
        #expect(try ledger.blobs.all().isEmpty, "nothing the archive refused is held")
        archive.failing.withLock { $0 = false }
        let stored = try ledger.blobs.store(receipt)
        #expect(try archive.holds(blob: stored.digest))

        // Lost from this node's disk (another node took the upload): attaching brings it back.
        unlink(try ledger.blobs.file(of: stored.digest))
        _ = try await ledger.create(.expense, expense(attaching: stored.digest), actor: "cli:test")
        #expect(try ledger.blobs.verify(stored.digest), "brought back whole")
        // Neither holds it: refused as before.
        let nobody = String(repeating: "ab", count: 32)
        await #expect(throws: ValidationError.self) { _ = try await ledger.create(.expense, expense(attaching: nobody), actor: "cli:test") }
    }

    /// What a peer asks before it sends blobs: one only the archive holds is not missing (the
    /// node brings it when asked for it), one neither holds is.
    @Test func aBlobOnlyTheArchiveHoldsIsNotMissingForAPeer() async throws {
        let archive = MemoryArchive()
        let ledger = try Ledger(directory: try DataDirectory.create(path: folder.file("m"), name: "m"), archive: archive)
        defer { ledger.close() }
        let here = try ledger.blobs.store(Data(AttachmentTests.jpeg(2_000, seed: 3)))
        let archivedOnly = try ledger.blobs.store(Data(AttachmentTests.jpeg(2_000, seed: 4)))
        unlink(try ledger.blobs.file(of: archivedOnly.digest))  // another node took the upload
        let nobody = String(repeating: "cd", count: 32)
        #expect(try await ledger.missingBlobs(among: [here.digest, archivedOnly.digest, nobody]) == [nobody])
        #expect(try await ledger.missingBlobs(among: [here.digest]) == [])
    }

    @Test func aBlobHeldOnlyOnThisNodeIsArchivedWhenUploadedOrAttachedAgain() async throws {
        let archive = MemoryArchive()
        let ledger = try Ledger(directory: try DataDirectory.create(path: folder.file("b"), name: "b"), archive: archive)
        defer { ledger.close() }
        // Held from before the ledger had an archive.
        let old = try ledger.blobs.local.store(Data(AttachmentTests.jpeg(2_000, seed: 1)))
        let older = try ledger.blobs.local.store(Data(AttachmentTests.jpeg(2_000, seed: 2)))
        #expect(try !archive.holds(blob: old.digest) && !archive.holds(blob: older.digest))
        _ = try ledger.blobs.store(Data(AttachmentTests.jpeg(2_000, seed: 1)))  // uploaded again
        #expect(try archive.holds(blob: old.digest))
        _ = try await ledger.create(.expense, expense(attaching: older.digest), actor: "cli:test")
        #expect(try archive.holds(blob: older.digest))
    }

    @Test func theQuotaCountsWhatTheArchiveHoldsAndRetentionRemovesWhatOnlyItHolds() async throws {
        let archive = MemoryArchive()
        let ledger = try Ledger(directory: try DataDirectory.create(path: folder.file("c"), name: "c"), archive: archive)
        defer { ledger.close() }
        let attached = try ledger.blobs.store(Data(AttachmentTests.jpeg(1_000, seed: 3)))
        _ = try await ledger.create(.expense, expense(attaching: attached.digest), actor: "cli:test")
        // Uploaded through a node that died: only the archive holds it, and nothing references it.
        let elsewhere = AttachmentTests.jpeg(5_000, seed: 4)
        let digest = Hex.lowercase(SHA256.hash(data: elsewhere))
        archive.held.withLock { $0[digest] = elsewhere }

        let total = try archive.blobs().reduce(0) { $0 + $1.size }
        let writer = try BlobStore(directory: ledger.directory, archive: archive, quota: { total + 100 }).writer(limit: 1 << 20)
        try writer.write(AttachmentTests.jpeg(200, seed: 5))
        #expect(throws: BlobError.overQuota(quota: total + 100), "the 5,000 bytes only the archive holds count") { _ = try writer.finish() }

        let collector = AttachmentCollector(ledger.blobs)
        let now = Date()
        #expect(try collector.run(views: ledger.views, dryRun: false, now: now).removed.isEmpty)
        let later = now.addingTimeInterval(AttachmentCollector.defaultRetention + 86_400)
        let run = try collector.run(views: ledger.views, dryRun: false, now: later)
        #expect(run.removed.map(\.digest) == [digest])
        #expect(try archive.blobs().map(\.digest) == [attached.digest], "removed from the archive; the referenced one kept")
        #expect(try ledger.blobs.size(of: attached.digest) != nil)
    }
}
