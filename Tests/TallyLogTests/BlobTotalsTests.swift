import Foundation
import Testing
@testable import TallyLog
import TallyTestSupport

/// `BlobTotals`: the quota's count of a store's bytes, walking only folders that changed.
struct BlobTotalsTests {
    let directory = TemporaryDirectory("tally-blobs")

    /// Sets the modification time of `folder` to `then` (as if written then; its change time
    /// moves to now, as it does for anyone who sets it).
    func setTime(_ folder: String, to then: Int) {
        #expect(utimes(folder, [timeval(tv_sec: then, tv_usec: 0), timeval(tv_sec: then, tv_usec: 0)]) == 0)
    }

    /// The prefix folders of the store at `path`.
    func folders(_ path: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.utf8.count == 2 }.map { path + "/" + $0 }
    }

    /// How many folders `totals` walked to count the store at `path` (as of `now`), and the count.
    func count(_ totals: BlobTotals, _ path: String, now: Date = Date()) throws -> (walked: Int, bytes: Int) {
        let before = totals.walks.load(ordering: .relaxed)
        let bytes = try totals.totalBytes(ofStoreAt: path, now: now)
        return (totals.walks.load(ordering: .relaxed) - before, bytes)
    }

    func held(_ store: BlobStore) throws -> Int { try store.all().reduce(0) { $0 + $1.size } }

    /// A wall clock a minute after now and a minute before: every folder's change time (moved
    /// to now by any change, `utimes` too) is long settled by the first, and "just now" for the
    /// second however slowly the test runs.
    let later = Date() + 60
    let earlier = Date() - 60

    @Test func theTotalFollowsEveryBlobAddedOrRemovedAndWalksOnlyTheFoldersThatChanged() throws {
        let store = BlobStore(path: directory.path)
        for index in 0..<20 { _ = try store.store(Data((0..<(100 + index)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) })) }
        let totals = BlobTotals()
        let folders = try folders(store.path).count

        #expect(try count(totals, store.path, now: later) == (folders, try held(store)))
        #expect(try count(totals, store.path, now: later) == (0, try held(store)), "nothing changed: nothing walked")

        // Another store of the same folder (another process, as `tally attachments` beside a server).
        let added = try BlobStore(path: directory.path).store(Data(repeating: 9, count: 5_000))
        #expect(try count(totals, store.path, now: earlier) == (1, try held(store)), "only the folder it went into")
        #expect(try count(totals, store.path, now: earlier).walked == 1, "changed just now: walked again at every count")
        #expect(try count(totals, store.path, now: later).walked == 1)
        #expect(try count(totals, store.path, now: later) == (0, try held(store)), "settled: remembered")

        try store.remove(added.digest)
        #expect(try count(totals, store.path, now: later) == (1, try held(store)))
        #expect(try store.totalBytes() == (try held(store)), "the store counts the same through the shared totals")
    }

    /// A store holding one blob of 300 bytes, its folder written an hour ago: the store, the
    /// folder and that time.
    func storeWithOneOldBlob() throws -> (store: BlobStore, folder: String, anHourAgo: Int) {
        let store = BlobStore(path: directory.path)
        let blob = try store.store(Data(repeating: 1, count: 300))
        let folder = store.path + "/" + blob.digest.prefix(2)
        let anHourAgo = Int(Date().timeIntervalSince1970) - 3_600
        setTime(folder, to: anHourAgo)
        return (store, folder, anHourAgo)
    }

    @Test func aFolderWhoseTimeIsSetBackAfterAChangeIsWalkedAgain() throws {
        let (store, folder, anHourAgo) = try storeWithOneOldBlob()
        let totals = BlobTotals()
        #expect(try count(totals, store.path, now: later) == (1, 300))
        // A blob of the same folder (its name made so), then the folder's time set back to
        // what it was: only its change time tells.
        let rest = String(repeating: "0", count: 62)
        try Data(repeating: 2, count: 50).write(to: URL(fileURLWithPath: folder + "/" + rest))
        setTime(folder, to: anHourAgo)
        #expect(try count(totals, store.path, now: earlier) == (1, 350))
        #expect(try count(totals, store.path, now: earlier).walked == 1, "its change time is new: not settled")
    }

    @Test func aFolderRemovedOrMadeAgainWithTheSameTimeIsCountedAsItIsNow() throws {
        let (store, folder, anHourAgo) = try storeWithOneOldBlob()
        let totals = BlobTotals()
        #expect(try count(totals, store.path, now: later).bytes == 300)
        try FileManager.default.removeItem(atPath: folder)
        #expect(try count(totals, store.path, now: later).bytes == 0)
        _ = try store.store(Data(repeating: 1, count: 300))
        setTime(folder, to: anHourAgo)
        #expect(try count(totals, store.path, now: later).bytes == 300)
        // Made again between two counts, its time the same as the one it replaces.
        try FileManager.default.removeItem(atPath: folder)
        _ = try store.store(Data(repeating: 1, count: 300))
        try Data(repeating: 3, count: 40).write(to: URL(fileURLWithPath: folder + "/" + String(repeating: "1", count: 62)))
        setTime(folder, to: anHourAgo)  // the same time as the folder it replaces
        #expect(try count(totals, store.path, now: later).bytes == 340)
    }

    @Test func aFolderLinkedFromElsewhereIsCountedAndWalkedEveryTime() throws {
        let store = BlobStore(path: directory.path)
        let elsewhere = TemporaryDirectory("tally-blobs-elsewhere")
        try Data(repeating: 4, count: 70).write(to: URL(fileURLWithPath: elsewhere.path + "/" + String(repeating: "2", count: 62)))
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: true)
        #expect(symlink(elsewhere.path, store.path + "/ab") == 0)
        let totals = BlobTotals()
        #expect(try count(totals, store.path, now: later) == (1, 70))
        try Data(repeating: 4, count: 30).write(to: URL(fileURLWithPath: elsewhere.path + "/" + String(repeating: "3", count: 62)))
        #expect(try count(totals, store.path, now: later) == (1, 100), "its link's times say nothing of what it holds")
    }

    @Test func aStoreThatIsNotThereHoldsNothing() throws {
        #expect(try BlobTotals().totalBytes(ofStoreAt: directory.path + "/none") == 0)
    }
}
