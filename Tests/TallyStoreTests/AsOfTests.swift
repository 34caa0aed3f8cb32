import Foundation
import GRDB
import Testing
@testable import TallyStore
import TallyCore
import TallyLog
import TallyTestSupport

/// Reading the views as of a past log index (`AsOfViews`), from snapshots (`ViewSnapshots`)
/// or from nothing, and the moments that stand for indexes (`ProjectionHistory`).
@Suite struct AsOfTests {
    /// Hands out `logged[from...]` in chunks, as the log reader does.
    static func source(_ logged: [LoggedEvent], chunk: Int = 7) -> (UInt64, ([LoggedEvent]) throws -> Void) throws -> Void {
        { from, each in
            var start = Int(from) - 1
            while start < logged.count {
                try each(Array(logged[start..<min(start + chunk, logged.count)]))
                start += chunk
            }
        }
    }

    /// Live views in a file (snapshots copy a pool, as the service's views are).
    static func liveViews(in folder: TemporaryDirectory) throws -> DatabasePool {
        let pool = try DatabasePool(path: folder.file("live.sqlite"), configuration: ProjectionDatabase.configuration())
        try ProjectionDatabase.migrate(pool)
        return pool
    }

    /// The property: capture the views after random prefixes of a random history (projected
    /// in random batches, snapshots taken at random points), then ask as of each captured
    /// index — from the latest snapshot at or before it, and from nothing — and get the same
    /// views, table by table.
    @Test(arguments: 0..<30) func asOfAnswersEqualTheViewsCapturedThen(seed: Int) throws {
        var rng = SplitMix64(seed: UInt64(seed) &* 7_919 &+ 13)
        let logged = RandomHistory.logged(RandomHistory.events(seed: UInt64(seed) &+ 500, count: Int.random(in: 20...160, using: &rng)))
        let folder = TemporaryDirectory("tally-asof")
        let live = try Self.liveViews(in: folder)
        let snapshots = ViewSnapshots(folder: folder.file("snapshots"))
        var captured: [UInt64: ViewChecksum] = [0: try live.read { try ViewChecksum.compute($0) }]
        var start = 0
        while start < logged.count {
            let end = min(logged.count, start + Int.random(in: 1...25, using: &rng))
            try live.write { _ = try Projector.applyBatch(Array(logged[start..<end]), $0) }
            captured[UInt64(end)] = try live.read { try ViewChecksum.compute($0) }
            if Int.random(in: 0..<3, using: &rng) == 0 || (snapshots.list().isEmpty && end * 2 >= logged.count) { try snapshots.take(from: live) }
            start = end
        }
        #expect(!snapshots.list().isEmpty)
        for (index, views) in captured {
            let snapshot = snapshots.latestGood(atOrBefore: index) { Issue.record("no snapshot is damaged: \($0)") }
            let fromSnapshot = try AsOfViews.read(
                base: snapshot.map { snapshots.databasePath($0.index) }, at: index,
                events: Self.source(logged)
            ) { try ViewChecksum.compute($0) }
            #expect(fromSnapshot.differences(from: views).isEmpty, "seed \(seed), index \(index), from snapshot \(snapshot?.index ?? 0)")
            let fromNothing = try AsOfViews.read(base: nil, at: index, events: Self.source(logged)) { try ViewChecksum.compute($0) }
            #expect(fromNothing.differences(from: views).isEmpty, "seed \(seed), index \(index), from nothing")
        }
        // Reading as of a snapshot never changes its file.
        for snapshot in snapshots.list() {
            #expect(try ViewSnapshots.checksum(of: snapshots.databasePath(snapshot.index), syncing: false).crc == snapshot.crc32c)
        }
    }

    @Test func aDamagedSnapshotIsIgnoredWithAWarningAndRemoved() throws {
        let logged = RandomHistory.logged(RandomHistory.events(seed: 42, count: 120))
        let folder = TemporaryDirectory("tally-asof")
        let live = try Self.liveViews(in: folder)
        let snapshots = ViewSnapshots(folder: folder.file("snapshots"))
        try live.write { _ = try Projector.applyBatch(Array(logged[0..<40]), $0) }
        try snapshots.take(from: live)
        try live.write { _ = try Projector.applyBatch(Array(logged[40..<80]), $0) }
        try snapshots.take(from: live)
        try live.write { _ = try Projector.applyBatch(Array(logged[80..<100]), $0) }
        let expected = try live.read { try ViewChecksum.compute($0) }
        #expect(snapshots.list().map(\.index) == [40, 80])

        // One byte flipped in the middle of the later snapshot's file.
        let path = snapshots.databasePath(80)
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        let middle = try handle.seekToEnd() / 2
        try handle.seek(toOffset: middle)
        let byte = try #require(handle.readData(ofLength: 1).first)
        try handle.seek(toOffset: middle)
        handle.write(Data([byte ^ 0x5A]))
        try handle.close()

        var warnings: [String] = []
        let snapshot = snapshots.latestGood(atOrBefore: 100) { warnings.append($0) }
        #expect(snapshot?.index == 40, "the damaged one is passed over for the one before")
        #expect(warnings.count == 1 && warnings[0].contains("views-000000000080.sqlite") && warnings[0].contains("damaged"))
        #expect(!FileManager.default.fileExists(atPath: path), "and removed")
        let answer = try AsOfViews.read(base: snapshots.databasePath(40), at: 100, events: Self.source(logged)) { try ViewChecksum.compute($0) }
        #expect(answer.differences(from: expected).isEmpty, "the answer is the same, only slower")

        // A snapshot cut short is damaged too; with none left the answer comes from nothing.
        let first = snapshots.databasePath(40)
        #expect(truncate(first, 4096) == 0)
        warnings = []
        #expect(snapshots.latestGood(atOrBefore: 100) { warnings.append($0) } == nil)
        #expect(warnings.count == 1 && warnings[0].contains("bytes"))
        let fromNothing = try AsOfViews.read(base: nil, at: 100, events: Self.source(logged)) { try ViewChecksum.compute($0) }
        #expect(fromNothing.differences(from: expected).isEmpty)
    }

    @Test func snapshotsThinOutEvenlyAndNeverLoseTheNewest() throws {
        let logged = RandomHistory.logged(RandomHistory.events(seed: 3, count: 100))
        let folder = TemporaryDirectory("tally-asof")
        let live = try Self.liveViews(in: folder)
        let snapshots = ViewSnapshots(folder: folder.file("snapshots"))
        for end in stride(from: 10, through: 100, by: 10) {
            try live.write { _ = try Projector.applyBatch(Array(logged[(end - 10)..<end]), $0) }
            try snapshots.take(from: live)
            snapshots.thin(keeping: 4)
            #expect(snapshots.list().count == min(end / 10, 4))
            #expect(snapshots.list().last?.index == UInt64(end))
        }
        let kept = snapshots.list().map(\.index)
        #expect(kept.first == 10 && kept.last == 100, "the oldest and newest stay: \(kept)")
        #expect(try snapshots.take(from: live) == nil, "one snapshot per index")
        #expect(!snapshots.isDue(checkpoint: 100, every: 10) && snapshots.isDue(checkpoint: 110, every: 10))
        // A file without a sidecar (a take cut short) goes at the next thinning.
        _ = FileManager.default.createFile(atPath: folder.file("snapshots/views-000000000555.sqlite"), contents: Data([1, 2, 3]))
        snapshots.thin(keeping: 4)
        #expect(!FileManager.default.fileExists(atPath: folder.file("snapshots/views-000000000555.sqlite")))
    }

    @Test func sidecarsThatLieAreNeverTrusted() throws {
        let logged = RandomHistory.logged(RandomHistory.events(seed: 11, count: 40))
        let folder = TemporaryDirectory("tally-asof")
        let live = try Self.liveViews(in: folder)
        let snapshots = ViewSnapshots(folder: folder.file("snapshots"))
        try live.write { _ = try Projector.applyBatch(Array(logged[0..<20]), $0) }
        let taken = try #require(try snapshots.take(from: live))
        // A sidecar claiming the largest index (no file beside it, then with one): not listed, never due-blocking, no trap.
        var forged = taken
        forged.index = .max
        try JSONEncoder().encode(forged).write(to: URL(fileURLWithPath: snapshots.sidecarPath(.max)))
        #expect(snapshots.list().map(\.index) == [20])
        try FileManager.default.copyItem(atPath: snapshots.databasePath(20), toPath: snapshots.databasePath(.max))
        #expect(snapshots.list().map(\.index) == [20, .max])
        #expect(snapshots.isDue(checkpoint: 40, every: 10) && !snapshots.isDue(checkpoint: 25, every: 10))
        // A log cut at 30 (tally log repair) takes the copies past it with it.
        snapshots.removeAll(after: 30)
        #expect(snapshots.list().map(\.index) == [20])
        // A copy whose views are at another index than its sidecar says is refused.
        var shifted = taken
        shifted.index = 15
        try FileManager.default.copyItem(atPath: snapshots.databasePath(20), toPath: snapshots.databasePath(15))
        try JSONEncoder().encode(shifted).write(to: URL(fileURLWithPath: snapshots.sidecarPath(15)))
        #expect(throws: AsOfViews.SnapshotMismatch.self) {
            try AsOfViews.read(base: snapshots.databasePath(15), expectedIndex: 15, at: 18, events: Self.source(logged)) { _ in 0 }
        }
    }

    @Test func aMomentStandsForTheIndexTheViewsHadReachedByTheEndOfThatSecond() throws {
        let logged = RandomHistory.logged(RandomHistory.events(seed: 9, count: 30))
        let queue = try emptyViews()
        /// Applies within one second, returning it.
        func applyWithinOneSecond(_ range: Range<Int>) throws -> Int64 {
            while true {
                let before = ProjectionHistory.currentSecond()
                try queue.write { _ = try Projector.applyBatch(Array(logged[range]), $0) }
                if ProjectionHistory.currentSecond() == before { return before }
            }
        }
        let first = try applyWithinOneSecond(0..<10)
        while ProjectionHistory.currentSecond() == first { usleep(20_000) }
        let second = try applyWithinOneSecond(10..<30)
        func index(_ second: Int64) throws -> UInt64 { try queue.read { try ProjectionHistory.index(atEndOf: second, $0) } }
        #expect(try index(first - 1) == 0, "before the first projection: the empty ledger")
        #expect(try index(first) == 10)
        #expect(try index(second - 1) == 10)
        #expect(try index(second) == 30)
        #expect(try index(.max) == 30)
        #expect(try index(.min) == 0)
    }

    @Test func aRebuildKeepsTheHistoryAndMayStartFromASnapshot() throws {
        let replica = try TestReplica()
        let writer = try replica.data.openWriter()
        try writer.append((0..<60).map { SampleEvents.expenseCreate(amount: Int64($0 + 1)) })
        let projector = try Projector(directory: replica.data)
        try projector.catchUp()
        let firstSecond = ProjectionHistory.currentSecond()
        try ViewSnapshots(replica.data).take(from: projector.database)
        while ProjectionHistory.currentSecond() == firstSecond { usleep(20_000) }
        try writer.append((0..<30).map { SampleEvents.expenseCreate(amount: Int64($0 + 100)) })
        writer.close()
        try projector.catchUp()
        let before = try projector.database.read { try ViewChecksum.compute($0) }

        let secondsBefore = try projector.database.read { try Row.fetchAll($0, sql: "SELECT second, last_index FROM projection_history") }
        let report = try ProjectionRebuilder.rebuild(replica.data, verifyOnly: false, fromSnapshot: true)
        #expect(report.startedFrom == 60 && report.differences.isEmpty && report.swapped)
        let after = try Projector(directory: replica.data)
        #expect(try after.database.read { try ViewChecksum.compute($0) } == before)
        let secondsAfter = try after.database.read { try Row.fetchAll($0, sql: "SELECT second, last_index FROM projection_history") }
        #expect(
            Array(secondsAfter.prefix(secondsBefore.count)) == secondsBefore, "every moment the replaced views reached is kept, also those after the snapshot")

        // A snapshot unlike the log (its rows changed behind its back, checksum made to match):
        // the rebuild from it differs from the live views, so the whole log is replayed instead.
        let snapshots = ViewSnapshots(replica.data)
        let path = snapshots.databasePath(60)
        try DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE expenses SET amount = amount + 1") }
        var sidecar = try #require(snapshots.list().first)
        (sidecar.bytes, sidecar.crc32c) = try ViewSnapshots.checksum(of: path, syncing: false)
        try JSONEncoder().encode(sidecar).write(to: URL(fileURLWithPath: snapshots.sidecarPath(60)))
        var warnings: [String] = []
        let replayed = try ProjectionRebuilder.rebuild(replica.data, verifyOnly: false, fromSnapshot: true, warn: { warnings.append($0) })
        #expect(replayed.startedFrom == nil && replayed.differences.isEmpty && warnings.count == 1)
        #expect(try Projector(directory: replica.data).database.read { try ViewChecksum.compute($0) } == before)
        #expect(try ProjectionRebuilder.rebuild(replica.data, verifyOnly: true).startedFrom == nil)
    }
}
