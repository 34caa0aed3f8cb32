import Foundation
import Testing
import TallyCore
@testable import TallyLog
import TallyStore
import TallySync
import TallyTestSupport

/// File-level shipping: a bad bundle is rejected whole and changes nothing; a good one applies once.
@Suite struct BundleTests {
    struct Pair {
        let folder = TemporaryDirectory("tally-sync")
        let source: DataDirectory
        let target: DataDirectory
        var bundle: String { folder.file("bundle") }

        /// `events` expenses then a local-only setting in the source (none of either when 0);
        /// `targetEvents` expenses of the target's own (an empty target adopts a bundle's segment
        /// files, a non-empty one appends the events, so rejections are checked both ways).
        init(events: Int = 12, targetEvents: Int = 0) throws {
            source = try DataDirectory.create(path: folder.file("a"), name: "a")
            target = try DataDirectory.create(path: folder.file("b"), name: "b")
            let targetWriter = try target.openWriter()  // as `tally init` does: the log starts with an empty segment
            if targetEvents > 0 { try targetWriter.append((0..<targetEvents).map { SampleEvents.expenseCreate(amount: Int64(-$0 - 1)) }) }
            targetWriter.close()
            guard events > 0 else { return }
            let writer = try source.openWriter()
            try writer.append((0..<events).map { SampleEvents.expenseCreate(amount: Int64($0 + 1)) })
            try writer.append([
                EventDraft(
                    entityType: .setting, entityID: .settingKey("widget"), operation: .create,
                    properties: [.value: .json("1")], actor: "t", isLocalOnly: true)
            ])
            writer.close()
        }

        /// `count` expenses written one at a time into the source, in segments of 2 KiB (a
        /// bundle of several files, all sealed but the last).
        func writeInSmallSegments(_ count: Int) throws {
            var small = LogConfiguration()
            small.segmentSizeLimit = 2_048
            let writer = try source.openWriter(configuration: small)
            defer { writer.close() }
            for index in 0..<count { try writer.append([SampleEvents.expenseCreate(amount: Int64(index + 1))]) }
        }

        func export(for vector: VersionVector? = nil) throws -> SegmentBundle.Manifest {
            try SegmentBundle.export(source, to: bundle, for: vector)
        }

        func importInto(maxSkew: UInt64 = 300_000) throws -> SegmentBundle.ImportReport {
            let writer = try target.openWriter()
            defer { writer.close() }
            return try SegmentBundle.importBundle(from: bundle, into: writer, maximumSkewMillis: maxSkew)
        }

        func targetLog() throws -> [String: Data] {
            var files: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: target.logPath) where name.hasSuffix(".tseg") {
                files[name] = try Data(contentsOf: URL(fileURLWithPath: target.logPath + "/" + name))
            }
            return files
        }

        /// Rewrites a bundle file and fixes up the manifest, as a tamperer who knows the format would.
        func tamper(_ change: (inout Data) -> Void) throws {
            let name = try FileManager.default.contentsOfDirectory(atPath: bundle).first { $0.hasSuffix(".tseg") }!
            let path = bundle + "/" + name
            var data = try Data(contentsOf: URL(fileURLWithPath: path))
            change(&data)
            try data.write(to: URL(fileURLWithPath: path))
        }

        func expectRejected(_ fragment: String) throws {
            let before = try targetLog()
            #expect {
                _ = try importInto()
            } throws: { error in
                guard let rejection = error as? SyncRejection else { return false }
                return "\(rejection)".contains(fragment) && "\(rejection)".contains("nothing was applied")
            }
            #expect(try targetLog() == before, "a rejected bundle changes nothing")
            #expect(!FileManager.default.fileExists(atPath: target.logPath + "/adopting"), "no staged copies are left behind")
        }
    }

    @Test func aBundleAppliesOnceAndLocalOnlyEventsNeverLeave() throws {
        let pair = try Pair()
        let manifest = try pair.export()
        #expect(manifest.events == 12, "the local-only setting is not exported")
        let first = try pair.importInto()
        #expect(first.applied == 12 && first.alreadyHeld == 0)
        let second = try pair.importInto()
        #expect(second.applied == 0 && second.alreadyHeld == 12, "importing twice equals importing once")
        let vectorA = try VersionVector(of: pair.source), vectorB = try VersionVector(of: pair.target)
        #expect(vectorB.covers(vectorA))
        #expect(vectorA.sequences.count == 1, "the local-only chain is not in the vector")
        #expect(try LogVerifier.verify(directory: pair.target.logPath).findings.isEmpty)
    }

    /// Segments holding only exportable events are copied byte for byte (up to the first
    /// that is not); the rest is re-framed; either way the target ends with the same events.
    @Test func segmentsAreCopiedWholeUntilALocalOnlyEventAndReframedAfter() throws {
        for localOnlyAfter in [nil, 150] as [Int?] {
            let pair = try Pair(events: 0)
            var small = LogConfiguration()
            small.segmentSizeLimit = 2_048
            let writer = try pair.source.openWriter(configuration: small)
            for index in 0..<240 {
                if index == localOnlyAfter {
                    try writer.append([
                        EventDraft(
                            entityType: .setting, entityID: .settingKey("theme"), operation: .create,
                            properties: [.value: .json("\"dark\"")], actor: "t", isLocalOnly: true)
                    ])
                }
                try writer.append([SampleEvents.expenseCreate(amount: Int64(index + 1))])
            }
            writer.close()
            let manifest = try pair.export()
            #expect(manifest.events == 240, "the local-only setting stays")
            let names = try pair.source.reader.segmentNames()
            #expect(names.count > 5, "the log spans several segments")
            var copied = 0
            for name in names {
                let original = try Data(contentsOf: URL(fileURLWithPath: pair.source.logPath + "/" + name))
                guard let inBundle = FileManager.default.contents(atPath: pair.bundle + "/" + name), inBundle == original else { break }
                copied += 1
            }
            if localOnlyAfter == nil {
                #expect(copied == names.count, "every segment is a file copy")
            } else {
                #expect(copied > 0 && copied < names.count, "copied up to the segment holding the local-only event: \(copied) of \(names.count)")
            }
            #expect(try pair.importInto().applied == 240)
            var sourceEvents: [Event] = [], targetEvents: [Event] = []
            try pair.source.reader.forEachEvent { if !$0.event.isLocalOnly { sourceEvents.append($0.event) } }
            try pair.target.reader.forEachEvent { targetEvents.append($0.event) }
            #expect(sourceEvents == targetEvents)
        }
    }

    /// A new replica's first import takes the bundle's segment files as they are: its log is
    /// byte for byte the bundle's, opens and verifies, takes further appends, and its views
    /// (first loaded from the events folded during the import) equal a rebuild from the log.
    /// A replica that already holds events appends instead, and ends with the same events.
    @Test func anEmptyReplicaAdoptsTheBundlesSegmentFiles() throws {
        for targetEvents in [0, 3] {
            let pair = try Pair(events: 0, targetEvents: targetEvents)
            try pair.writeInSmallSegments(120)
            let manifest = try pair.export()
            #expect(manifest.files.count > 3, "the bundle spans several segments")

            let target = try pair.target.openWriter()
            let report = try SegmentBundle.importBundle(from: pair.bundle, into: target, maximumSkewMillis: 300_000)
            #expect(report.applied == 120)
            let adoptedHead = target.head
            var bundleFiles: [String: Data] = [:]
            for file in manifest.files { bundleFiles[file.name] = FileManager.default.contents(atPath: pair.bundle + "/" + file.name) }
            if targetEvents == 0 {
                #expect(try pair.targetLog() == bundleFiles, "the log is the bundle's files, byte for byte")
                #expect(report.folded?.lastIndex == 120)
            } else {
                #expect(try pair.targetLog() != bundleFiles)
                #expect(report.folded == nil, "only a first import folds")
            }
            try target.append([SampleEvents.expenseCreate(amount: 7)])
            #expect(target.head.lastIndex == UInt64(121 + targetEvents))
            let headAfterAdoption = target.head
            target.close()
            // The head an adoption took from verification is the one decoding the log gives.
            var decodedHead = LogHead()
            try pair.target.reader.forEachEvent { logged in
                if logged.index <= adoptedHead.lastIndex { decodedHead.advance(past: logged.event, hash: logged.hash) }
            }
            #expect(adoptedHead == decodedHead)
            let reopened = try pair.target.openWriter()
            #expect(reopened.head == headAfterAdoption)
            reopened.close()
            #expect(try LogVerifier.verify(directory: pair.target.logPath).findings.isEmpty)
            #expect(try pair.importInto().alreadyHeld == 120, "importing again is a no-op")

            let projector = try Projector(directory: pair.target)
            try projector.catchUp(startingFrom: report.folded)
            let rebuilt = try ProjectionRebuilder.rebuild(pair.target, verifyOnly: true)
            #expect(rebuilt.differences.isEmpty, "\(rebuilt.differences)")
            #expect(rebuilt.events == 121 + targetEvents)
        }
    }

    /// A seal that does not sum up the events before it (re-checksummed by a forger who knows
    /// the format) is refused before anything is adopted: a writer opening the log would
    /// otherwise take the seal's word for the chains.
    @Test func aForgedSealIsRejected() throws {
        let pair = try Pair(events: 0)
        try pair.writeInSmallSegments(40)
        _ = try pair.export()
        let first = pair.bundle + "/" + SegmentFormat.fileName(firstIndex: 1)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: first)))
        var offset = SegmentFormat.fileHeaderSize
        while let header = bytes.withUnsafeBytes({ FrameHeader.decode(UnsafeRawBufferPointer(rebasing: $0[offset...])) }), header.type != .seal {
            offset += SegmentFormat.frameHeaderSize + Int(header.storedLength)
        }
        let payloadStart = offset + SegmentFormat.frameHeaderSize
        var seal = try bytes.withUnsafeBytes { try LogHead.decode(UnsafeRawBufferPointer(rebasing: $0[payloadStart...])) }
        let origin = seal.chains.keys.first!
        seal.chains[origin]!.hash = EventHash(bytes: [UInt8](repeating: 7, count: 32))
        let summary = seal.encoded()
        let header = FrameHeader(
            type: .seal, codec: .none, eventCount: 0, firstIndex: seal.lastIndex + 1, rawLength: UInt32(summary.count),
            storedLength: UInt32(summary.count), payloadChecksum: CRC32C.checksum(summary))
        bytes.replaceSubrange(offset..., with: header.encoded() + summary)
        try Data(bytes).write(to: URL(fileURLWithPath: first))
        try refreshManifest(pair.bundle)
        try pair.expectRejected("seal summary does not match")
    }

    /// Each segment of a bundle starts where the one before it ended, an empty last one too.
    /// Found by review: a header-only last segment named past the end read cleanly, was adopted
    /// into a new replica's empty log, and every open of that log failed after it.
    @Test func aHeaderOnlyLastSegmentNamedPastTheEndIsRejected() throws {
        let pair = try Pair(events: 0)
        try pair.writeInSmallSegments(40)
        var manifest = try pair.export()
        try #require(manifest.files.count > 2)
        // The bundle as a forger makes it: its sealed segments, then a header-only file whose
        // name (and header) skip eight indexes.
        let open = manifest.files.removeLast().name
        try FileManager.default.removeItem(atPath: pair.bundle + "/" + open)
        let next = try #require(SegmentFormat.firstIndex(fromFileName: open))
        let pastTheEnd = SegmentFormat.fileName(firstIndex: next + 8)
        try Data(SegmentFormat.fileHeader(firstIndex: next + 8)).write(to: URL(fileURLWithPath: pair.bundle + "/" + pastTheEnd))
        manifest.files.append(.init(name: pastTheEnd, bytes: 0, sha256: ""))
        manifest.events = Int(next - 1)
        try JSONEncoder().encode(manifest).write(to: URL(fileURLWithPath: pair.bundle + "/manifest.json"))
        try refreshManifest(pair.bundle)
        try pair.expectRejected("segment starts at index \(next + 8), expected \(next)")
        let reopened = try pair.target.openWriter()
        #expect(reopened.head.lastIndex == 0, "the replica still opens, empty")
        reopened.close()
    }

    /// A crash while adopting leaves the staged copies behind; the next writer removes them.
    @Test func stagedCopiesLeftByACrashAreRemovedOnOpen() throws {
        let pair = try Pair()
        _ = try pair.export()
        let staged = pair.target.logPath + "/adopting"
        try FileManager.default.createDirectory(atPath: staged, withIntermediateDirectories: false)
        try FileManager.default.copyItem(
            atPath: pair.bundle + "/" + SegmentFormat.fileName(firstIndex: 1), toPath: staged + "/" + SegmentFormat.fileName(firstIndex: 1))
        let writer = try pair.target.openWriter()
        #expect(writer.head.lastIndex == 0, "staged files are not part of the log")
        writer.close()
        #expect(!FileManager.default.fileExists(atPath: staged))
        #expect(try pair.importInto().applied == 12)
    }

    @Test func exportForAVectorSendsOnlyWhatIsLacking() throws {
        let pair = try Pair()
        let origin = pair.source.identity.origin
        let manifest = try pair.export(for: VersionVector([origin: 10]))
        #expect(manifest.events == 2)
        #expect(manifest.origins[origin.description] == [11, 12])
        // The target lacks #1…#10, so #11 would leave a gap: refused whole.
        try pair.expectRejected("gap")
    }

    @Test(arguments: [0, 2]) func aCorruptedBundleIsRejected(targetEvents: Int) throws {
        let pair = try Pair(targetEvents: targetEvents)
        _ = try pair.export()
        try pair.tamper { $0[$0.count / 2] ^= 0x20 }
        try pair.expectRejected("SHA-256")
    }

    @Test(arguments: [0, 2]) func aTruncatedBundleIsRejected(targetEvents: Int) throws {
        let pair = try Pair(targetEvents: targetEvents)
        _ = try pair.export()
        try pair.tamper { $0.removeLast(40) }
        try pair.expectRejected("SHA-256")
    }

    @Test(arguments: [0, 2]) func aBundleWithoutItsManifestIsRejected(targetEvents: Int) throws {
        let pair = try Pair(targetEvents: targetEvents)
        _ = try pair.export()
        try FileManager.default.removeItem(atPath: pair.bundle + "/manifest.json")
        try pair.expectRejected("no manifest.json")
    }

    /// A bundle file is checked for its type and size before it is read: a link out of the
    /// folder and a huge sparse file are refused without reading them.
    @Test(arguments: [0, 2]) func linksAndOversizedFilesAreRefusedUnread(targetEvents: Int) throws {
        let linked = try Pair(targetEvents: targetEvents)
        let manifest = try linked.export()
        let name = manifest.files[0].name
        let outside = linked.folder.file("outside.tseg")
        try FileManager.default.moveItem(atPath: linked.bundle + "/" + name, toPath: outside)
        try FileManager.default.createSymbolicLink(atPath: linked.bundle + "/" + name, withDestinationPath: outside)
        try linked.expectRejected("not a regular file")

        let sparse = try Pair(targetEvents: targetEvents)
        let listed = try sparse.export()
        let path = sparse.bundle + "/" + listed.files[0].name
        let fd = open(path, O_WRONLY)
        #expect(ftruncate(fd, 3 << 30) == 0)  // 3 GiB, sparse: reading it whole would need 3 GiB of memory
        close(fd)
        try sparse.expectRejected("differs from the manifest")
    }

    /// A segment named at index 0, or past the largest index a log may hold, is refused by its
    /// name before it is read (scanning such a file once stopped the process).
    @Test(arguments: ["0000000000000000.tseg", "ffffffffffffffff.tseg"]) func segmentsNamedOutsideTheIndexRangeAreRefused(name: String) throws {
        let pair = try Pair()
        var manifest = try pair.export()
        try FileManager.default.moveItem(atPath: pair.bundle + "/" + manifest.files[0].name, toPath: pair.bundle + "/" + name)
        manifest.files[0].name = name
        try JSONEncoder().encode(manifest).write(to: URL(fileURLWithPath: pair.bundle + "/manifest.json"))
        try pair.expectRejected("not a segment file name")
    }

    /// A careful forger re-encodes an edited event with valid frame checksums and manifest:
    /// only the hash chain can tell, and it does.
    @Test(arguments: [0, 2]) func aForgedEventIsRejectedByTheHashChain(targetEvents: Int) throws {
        let pair = try Pair(targetEvents: targetEvents)
        _ = try pair.export()
        try forge(pair.bundle) { events in
            var event = try EventCodec.decode(events[4])
            event.properties[.amount] = .int(99_999_999)
            events[4] = EventCodec.encode(event)
        }
        try pair.expectRejected("hash chain")
    }

    @Test(arguments: [0, 2]) func reorderedEventsAreRejected(targetEvents: Int) throws {
        let pair = try Pair(targetEvents: targetEvents)
        _ = try pair.export()
        try forge(pair.bundle) { events in events.swapAt(2, 3) }
        try pair.expectRejected("gap")
    }

    @Test(arguments: [0, 2]) func eventsStampedTooFarAheadAreRejected(targetEvents: Int) throws {
        let pair = try Pair(events: 1, targetEvents: targetEvents)
        // Append an event stamped an hour ahead to the source's log, as a replica with a wrong clock would.
        let writer = try pair.source.openWriter()
        let head = writer.head.chains[pair.source.identity.origin]!
        let future = Event(
            origin: pair.source.identity.origin, sequence: head.sequence + 1,
            timestamp: HybridTimestamp(millis: HybridClock.wallMillis() + 3_600_000, counter: 0), actor: "skewed",
            entityType: .expense, entityID: .uuid(UUID()), operation: .delete, properties: [:], previousHash: head.hash)
        try writer.appendEncoded([(EventCodec.encode(future), future)])
        writer.close()
        _ = try pair.export()
        try pair.expectRejected("clock skew")
    }

    /// Re-frames a bundle's events after `change`, with fresh checksums and manifest.
    func forge(_ bundle: String, _ change: (inout [[UInt8]]) throws -> Void) throws {
        var events: [[UInt8]] = []
        try LogReader(directory: bundle).forEachEncodedEvent { _, bytes in events.append(Array(bytes)) }
        try change(&events)
        let manifestData = FileManager.default.contents(atPath: bundle + "/manifest.json")!
        let manifest = try JSONDecoder().decode(SegmentBundle.Manifest.self, from: manifestData)
        for file in manifest.files { try FileManager.default.removeItem(atPath: bundle + "/" + file.name) }
        var writer = try SegmentFileWriter(directory: bundle)
        for bytes in events { bytes.withUnsafeBytes { writer.append($0, of: try! EventCodec.decode(bytes)) } }
        try writer.finish()
        try refreshManifest(bundle)
    }

    /// Rewrites a bundle's manifest with its files' current sizes and SHA-256s.
    func refreshManifest(_ bundle: String) throws {
        let manifestData = FileManager.default.contents(atPath: bundle + "/manifest.json")!
        var manifest = try JSONDecoder().decode(SegmentBundle.Manifest.self, from: manifestData)
        manifest.files = try manifest.files.map { file in
            let data = try Data(contentsOf: URL(fileURLWithPath: bundle + "/" + file.name))
            return SegmentBundle.Manifest.File(name: file.name, bytes: data.count, sha256: SegmentBundle.sha256Hex(data))
        }
        try JSONEncoder().encode(manifest).write(to: URL(fileURLWithPath: bundle + "/manifest.json"))
    }
}
