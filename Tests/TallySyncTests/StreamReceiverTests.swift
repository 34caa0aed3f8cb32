import Foundation
import Testing
import TallyCore
import TallyLog
@testable import TallyStore
import TallySync
import TallyTestSupport

/// The HTTP path's two ends without HTTP: `EventRecords.missing` (what a sender streams) and
/// `StreamReceiver` (verify, append in batches, and fold for a first load).
@Suite struct StreamReceiverTests {
    let folder = TemporaryDirectory("tally-stream")

    func source(events: Int) throws -> DataDirectory {
        let source = try DataDirectory.create(path: folder.file("source"), name: "source")
        let writer = try source.openWriter()
        for index in 0..<events {
            try writer.append([SampleEvents.expenseCreate(amount: Int64(index + 1))])
            if index == events / 2 {  // a local-only setting in the middle, never sent
                try writer.append([
                    EventDraft(
                        entityType: .setting, entityID: .settingKey("theme"), operation: .create,
                        properties: [.value: .json("\"dark\"")], actor: "t", isLocalOnly: true)
                ])
            }
        }
        writer.close()
        return source
    }

    func records(of source: DataDirectory, for vector: VersionVector) throws -> (chunks: [[UInt8]], count: Int) {
        var chunks: [[UInt8]] = []
        var count = 0
        try EventRecords.missing(from: source, for: vector, chunkBytes: 1_000) { chunk, events in
            chunks.append(chunk)
            count += events
        }
        return (chunks, count)
    }

    @Test func sendersStreamOnlyWhatTheVectorLacksAndNeverLocalOnlyEvents() throws {
        let source = try source(events: 50)
        #expect(try records(of: source, for: VersionVector([:])).count == 50)
        #expect(try records(of: source, for: VersionVector([source.identity.origin: 20])).count == 30)
        #expect(try records(of: source, for: VersionVector([source.identity.origin: 50])).count == 0)
    }

    /// A receiver that starts on an empty log folds what it appends; the first load from that
    /// fold equals a rebuild from the log. When another append gets in between, it drops the
    /// fold, and the ordinary first load still gives the same views.
    @Test(arguments: [false, true]) func aReceiverIntoAnEmptyLogFoldsWhatItAppends(interleaved: Bool) throws {
        let source = try source(events: 60)
        let target = try DataDirectory.create(path: folder.file("target-\(interleaved)"), name: "target")
        let writer = try target.openWriter()
        var receiver = try StreamReceiver(writer: writer, source: "test", maximumSkewMillis: 300_000, batchSize: 7)
        for (position, chunk) in try records(of: source, for: VersionVector([:])).chunks.enumerated() {
            try receiver.feed(chunk)
            if interleaved, position == 1 { try writer.append([SampleEvents.expenseCreate(amount: 999)]) }
        }
        try receiver.finish()
        writer.close()
        #expect(receiver.applied == 60)
        let folded = receiver.takeFolded()
        if interleaved {
            #expect(folded == nil)
        } else {
            #expect(folded?.lastIndex == 60)
            #expect(receiver.takeFolded() == nil, "handed over once")
        }
        try Projector(directory: target).catchUp(startingFrom: folded)
        let rebuilt = try ProjectionRebuilder.rebuild(target, verifyOnly: true)
        #expect(rebuilt.differences.isEmpty, "\(rebuilt.differences)")
        #expect(rebuilt.events == (interleaved ? 61 : 60))
    }

    /// A receiver into a log that holds events folds nothing until its delivery reaches both
    /// `foldingBulksFrom` and the log's own size; then it reads the log once and folds the rest
    /// as it arrives. The bulk projection from that fold equals a rebuild. A smaller delivery,
    /// or one another append got into, hands over no fold.
    @Test(arguments: [(held: 10, from: 20, folds: true), (held: 70, from: 20, folds: false), (held: 10, from: 100, folds: false)])
    func aReceiverIntoALogThatHoldsEventsFoldsOnlyABulk(held: Int, from: Int, folds: Bool) throws {
        let source = try source(events: 60)
        let target = try DataDirectory.create(path: folder.file("target-held-\(held)-\(from)"), name: "target")
        let writer = try target.openWriter()
        _ = try writer.append((0..<held).map { SampleEvents.expenseCreate(amount: Int64(1_000 + $0)) })
        try Projector(directory: target).catchUp()
        var receiver = try StreamReceiver(writer: writer, source: "test", maximumSkewMillis: 300_000, batchSize: 7, foldingBulksFrom: from)
        for chunk in try records(of: source, for: VersionVector([:])).chunks { try receiver.feed(chunk) }
        try receiver.finish()
        writer.close()
        let folded = receiver.takeFolded()
        #expect((folded != nil) == folds, "folded through \(folded?.lastIndex ?? 0)")
        if let folded {
            var fromDisk = FoldedLog()
            try target.reader.forEachEvent { fromDisk.apply($0.event) }
            #expect(folded.lastIndex == UInt64(held + 60))
            #expect(folded.state.entities == fromDisk.state.entities, "the fold is the whole log's")
        }
        var projector = try Projector(directory: target)
        projector.freshGenerationFrom = UInt64(from)
        #expect(try projector.catchUpInBulk(through: UInt64(held + 60), startingFrom: folded) == 60)
        #expect(ProjectionDatabase.currentGeneration(target) == (folds ? 2 : 1), "a bulk gets new views")
        let rebuilt = try ProjectionRebuilder.rebuild(target, verifyOnly: true)
        #expect(rebuilt.differences.isEmpty, "\(rebuilt.differences)")
    }

    /// The same delivery folds when nothing else appends, and drops its fold when another
    /// append gets in late, after the fold began (the first batches, 14 events ≥ 10).
    @Test(arguments: [false, true]) func aFoldIsDroppedWhenAnotherAppendGetsIntoTheDelivery(interleaved: Bool) throws {
        let source = try source(events: 60)
        let target = try DataDirectory.create(path: folder.file("target-held-interleaved-\(interleaved)"), name: "target")
        let writer = try target.openWriter()
        _ = try writer.append([SampleEvents.expenseCreate(amount: 1_000)])
        var receiver = try StreamReceiver(writer: writer, source: "test", maximumSkewMillis: 300_000, batchSize: 7, foldingBulksFrom: 10)
        let chunks = try records(of: source, for: VersionVector([:])).chunks
        for (position, chunk) in chunks.enumerated() {
            try receiver.feed(chunk)
            if interleaved, position == chunks.count - 3 { try writer.append([SampleEvents.expenseCreate(amount: 999)]) }
        }
        try receiver.finish()
        writer.close()
        #expect(receiver.applied == 60)
        #expect(receiver.takeFolded()?.lastIndex == (interleaved ? nil : 61))
    }

    /// Appends run one batch behind the verification; a failed append is not lost: the
    /// receiver throws it, and what was appended before it stays.
    @Test func aFailedAppendIsReportedAndWhatWasAppendedStays() throws {
        let source = try source(events: 60)
        let target = try DataDirectory.create(path: folder.file("target-failing"), name: "target")
        let writer = try target.openWriter()
        var receiver = try StreamReceiver(writer: writer, source: "test", maximumSkewMillis: 300_000, batchSize: 7)
        let chunks = try records(of: source, for: VersionVector([:])).chunks
        try receiver.feed(chunks[0])
        try receiver.feed(chunks[1])
        receiver.stop()
        let durable = receiver.applied
        #expect(durable > 0 && durable < 60)
        writer.close()  // later appends fail
        #expect(throws: (any Error).self) {
            for chunk in chunks.dropFirst(2) { try receiver.feed(chunk) }
            try receiver.finish()
        }
        #expect(receiver.applied == durable)
        #expect(try target.reader.statistics().events == UInt64(durable))
    }
}
