import Foundation
import Testing
@testable import TallyLog
import TallyTestSupport

/// `BlobTotals`: the quota's count of a store's bytes, walking only folders that changed.
struct BlobTotalsTests {
    let directory = TemporaryDirectory("tally-blobs")

    /// Sets every prefix folder's times `secondsAgo` in the past (as if written then).
    func age(_ path: String, secondsAgo: Int) throws {
        let then = Int(Date().timeIntervalSince1970) - secondsAgo
        for prefix in try FileManager.default.contentsOfDirectory(atPath: path) where prefix.utf8.count == 2 {
            let times = [timeval(tv_sec: then, tv_usec: 0), timeval(tv_sec: then, tv_usec: 0)]
            #expect(utimes(path + "/" + prefix, times) == 0)
        }
    }

    func walked(_ totals: BlobTotals, _ body: () throws -> Void) rethrows -> Int {
        let before = totals.walks.load(ordering: .relaxed)
        try body()
        return totals.walks.load(ordering: .relaxed) - before
    }

    @Test func theTotalFollowsEveryBlobAddedOrRemovedAndWalksOnlyTheFoldersThatChanged() throws {
        let store = BlobStore(path: directory.path)
        for index in 0..<20 { _ = try store.store(Data((0..<(100 + index)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) })) }
        try age(store.path, secondsAgo: 3_600)
        let totals = BlobTotals()
        let held = { try store.all().reduce(0) { $0 + $1.size } }
        let folders = Set(try store.all().map { $0.digest.prefix(2) }).count

        var total = 0
        #expect(walked(totals) { total = totals.totalBytes(ofStoreAt: store.path) } == folders)
        #expect(total == (try held()))
        #expect(walked(totals) { total = totals.totalBytes(ofStoreAt: store.path) } == 0, "nothing changed: nothing walked")
        #expect(total == (try held()))

        // Another store of the same folder (another process, as `tally attachments` beside a server).
        let added = try BlobStore(path: directory.path).store(Data(repeating: 9, count: 5_000))
        // (`now` a minute back: the folder changed "just now" however slowly the test runs.)
        let justAfter = Date() - 60
        #expect(walked(totals) { total = totals.totalBytes(ofStoreAt: store.path, now: justAfter) } == 1, "only the folder it went into")
        #expect(total == (try held()))
        // Changed just now: walked again at every count until it has settled.
        #expect(walked(totals) { total = totals.totalBytes(ofStoreAt: store.path, now: justAfter) } == 1)
        #expect(walked(totals) { total = totals.totalBytes(ofStoreAt: store.path, now: Date() + 5) } == 1)
        #expect(walked(totals) { total = totals.totalBytes(ofStoreAt: store.path) } == 0, "settled: remembered")

        try store.remove(added.digest)
        #expect(walked(totals) { total = totals.totalBytes(ofStoreAt: store.path, now: Date() - 60) } == 1)
        #expect(total == (try held()))
        #expect(try store.totalBytes() == (try held()), "the store counts the same through the shared totals")
    }

    @Test func aFolderRemovedOrMadeAgainIsCountedAsItIsNow() throws {
        let store = BlobStore(path: directory.path)
        let blob = try store.store(Data(repeating: 1, count: 300))
        try age(store.path, secondsAgo: 3_600)
        let totals = BlobTotals()
        #expect(totals.totalBytes(ofStoreAt: store.path) == 300)
        let folder = store.path + "/" + blob.digest.prefix(2)
        try FileManager.default.removeItem(atPath: folder)
        #expect(totals.totalBytes(ofStoreAt: store.path) == 0)
        _ = try store.store(Data(repeating: 1, count: 300))
        _ = try store.store(Data(repeating: 1, count: 300) + Data([2]))
        #expect(totals.totalBytes(ofStoreAt: store.path) == (try store.all().reduce(0) { $0 + $1.size }))
    }
}
