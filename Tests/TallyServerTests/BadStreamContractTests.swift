import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import TallyCore
import TallyLog
import TallyServer
@testable import TallySync
import TallyTestSupport

/// The second half of the bad-delivery contract (`BadDeliveryContractTests` holds the value
/// rules): deliveries whose *structure* is wrong — gaps, broken or forked chains, reordering,
/// local-only events, a cut-off end, flipped bytes — crafted byte by byte, since no honest log
/// can hold them, and run through a file bundle and an HTTP push alike. Each is refused whole,
/// naming what is wrong, and changes nothing.
@Suite struct BadStreamContractTests {
    /// What is wrong with a delivery of three events #1…#3 of a foreign origin.
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        /// Any of these in the refusal (the transports word a cut-off end differently).
        let fragments: [String]
        /// Changes the events before they are encoded (the chain is recomputed afterwards).
        var event: @Sendable (inout [Event]) -> Void = { _ in }
        /// Changes the encoded events (after chaining: this breaks chains).
        var records: @Sendable (inout [[UInt8]]) -> Void = { _ in }
        /// Damages the delivered bytes themselves: cut `trim` bytes off the end, or flip one in the middle.
        var trim = 0
        var flip = false
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "a gap", fragments: ["a gap"], records: { $0.remove(at: 1) }),
        Case(name: "reordered events", fragments: ["a gap"], records: { $0.swapAt(1, 2) }),
        Case(
            name: "an edited event (broken chain)", fragments: ["hash chain"],
            records: { records in
                let last = records[1].count - 1
                records[1][last - 40] ^= 0x01  // inside the memo text: still decodes, hashes differently
            }),
        Case(
            name: "a forked chain (two different #2)", fragments: ["differs from"],
            records: { records in
                var other = records[1]
                other[other.count - 41] ^= 0x02
                records[2] = other
            }),
        Case(
            name: "a local-only event", fragments: ["local-only"],
            event: { events in
                events[2] = Event(
                    origin: events[2].origin, sequence: 3, timestamp: events[2].timestamp, actor: "peer", isLocalOnly: true,
                    entityType: .setting, entityID: .settingKey("widget"), operation: .create, properties: [.value: .json("1")],
                    previousHash: .zero)
            }),
        Case(name: "a sequence 0", fragments: ["sequence 0", "does not decode", "damaged"], event: { events in events[0].sequence = 0 }),
        // In a bundle, a damaged last frame reads as a torn tail: the manifest's count refuses it,
        // or (when the cut frame is the signatures frame) the events arrive unsigned.
        Case(name: "a cut-off end", fragments: ["ended inside a record", "the segments hold", "without a head signed"], trim: 7),
        Case(
            name: "a flipped byte", fragments: ["checksum", "damaged", "does not decode", "hash chain", "the segments hold", "unknown", "signed", "signature"],
            flip: true),
    ]

    /// The three events, chained, with the case's changes.
    static func records(_ testCase: Case) -> [(bytes: [UInt8], event: Event)] {
        let origin = ReplicaID.random()
        var events = (1...3).map { sequence in
            let draft = SampleEvents.expenseCreate(amount: Int64(sequence) * 100, memo: "memo of event number \(sequence) 가계부", actor: "peer")
            return Event(
                origin: origin, sequence: UInt64(sequence), timestamp: HybridTimestamp(millis: HybridClock.wallMillis(), counter: UInt32(sequence)),
                actor: "peer", entityType: draft.entityType, entityID: draft.entityID, operation: draft.operation,
                properties: draft.properties, previousHash: .zero)
        }
        testCase.event(&events)
        var previous = EventHash.zero
        var encoded: [[UInt8]] = []
        for index in events.indices {
            if events[index].sequence > 0 { events[index].previousHash = previous }
            let bytes = EventCodec.encode(events[index])
            previous = EventCodec.hash(bytes)
            encoded.append(bytes)
        }
        testCase.records(&encoded)
        return encoded.map { bytes in (bytes, (try? EventCodec.decode(bytes)) ?? events[0]) }
    }

    static func damaged(_ bytes: [UInt8], _ testCase: Case) -> [UInt8] {
        var bytes = bytes
        if testCase.trim > 0 { bytes.removeLast(testCase.trim) }
        if testCase.flip { bytes[bytes.count / 2] ^= 0x40 }
        return bytes
    }

    /// A target replica; its log files, to show that nothing changed.
    struct Target {
        let folder = TemporaryDirectory("tally-stream-contract")
        let directory: DataDirectory
        init() throws {
            directory = try DataDirectory.create(path: folder.file("target"), name: "target")
            try directory.openWriter().close()
        }
        func log() throws -> [String: Data] {
            var files: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.logPath) where name.hasSuffix(".tseg") {
                files[name] = try Data(contentsOf: URL(fileURLWithPath: directory.logPath + "/" + name))
            }
            return files
        }
    }

    /// The bundle a tamperer who knows the format would write: segment files of the records,
    /// damaged as the case says, and a manifest that matches them (so the deeper checks speak).
    static func bundle(_ testCase: Case, in target: Target) throws -> String? {
        let folder = target.folder.file("bundle")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var writer = try SegmentFileWriter(directory: folder)
        let records = records(testCase)
        for (bytes, event) in records { bytes.withUnsafeBytes { writer.append($0, of: event) } }
        writer.append(TestSigning.heads(for: records))
        try writer.finish()
        var files: [SegmentBundle.Manifest.File] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: folder).sorted() where name.hasSuffix(".tseg") {
            let path = folder + "/" + name
            let bytes = damaged([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), testCase)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            files.append(SegmentBundle.listing(Data(bytes), as: name))
        }
        let manifest = SegmentBundle.Manifest(
            fromReplica: ReplicaID.random().description, createdAt: "2026-11-24T00:00:00Z",
            events: records.count, origins: [:], files: files)
        try JSONEncoder().encode(manifest).write(to: URL(fileURLWithPath: folder + "/manifest.json"))
        let log = try target.directory.openWriter()
        defer { log.close() }
        do { _ = try SegmentBundle.importBundle(from: folder, into: log, maximumSkewMillis: 300_000) } catch { return "\(error)" }
        return nil
    }

    /// The same records over `POST /v1/replication/push`.
    static func push(_ testCase: Case, in target: Target) async throws -> String? {
        var stream: [UInt8] = []
        let records = records(testCase)
        for (bytes, _) in records { bytes.withUnsafeBytes { EventRecords.append($0, to: &stream) } }
        for head in TestSigning.heads(for: records) { EventRecords.append(head, to: &stream) }
        let body = damaged(stream, testCase)
        let service = try TallyService(directory: target.directory, logger: Logger(label: "test"))
        defer { service.close() }
        let token = try service.tokens.create(name: "peer", scopes: [.replicate])
        return try await Application(router: buildRouter(service)).test(.router) { client -> String? in
            let response = try await client.execute(
                uri: "/v1/replication/push", method: .post,
                headers: [.authorization: "Bearer \(token)", .contentType: "application/octet-stream"],
                body: ByteBuffer(bytes: body))
            return response.status == .ok ? nil : "\(response.status.code) " + String(buffer: response.body)
        }
    }

    static func expectRefused(_ testCase: Case, _ name: String, _ deliver: (Case, Target) async throws -> String?) async throws {
        let target = try Target()
        let before = try target.log()
        let refusal = try await deliver(testCase, target)
        #expect(
            refusal.map { text in testCase.fragments.contains { text.contains($0) } } == true,
            "\(name): \(testCase.name) refused naming it (got \(refusal ?? "acceptance"))")
        #expect(try target.log() == before, "\(name): a refused delivery changes nothing")
    }

    @Test(arguments: cases) func aBundleIsRefusedWhole(_ testCase: Case) async throws {
        try await Self.expectRefused(testCase, "bundle") { try Self.bundle($0, in: $1) }
    }

    @Test(arguments: cases) func aPushIsRefusedWhole(_ testCase: Case) async throws {
        try await Self.expectRefused(testCase, "push") { try await Self.push($0, in: $1) }
    }

    /// The control: the crafted delivery without a fault goes through both.
    @Test func theCraftedDeliveryIsAcceptedWhenNothingIsWrong() async throws {
        let good = Case(name: "good", fragments: [])
        #expect(try Self.bundle(good, in: try Target()) == nil)
        #expect(try await Self.push(good, in: try Target()) == nil)
    }
}
