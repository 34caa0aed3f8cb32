import Foundation
import TallyCore
import TallyLog
import TallySync
import TallyTestSupport

/// Seed inputs for each fuzz target, made from the test suite's sample events: real segment
/// files as the log writer writes them, single encoded events, and request bodies (entity
/// JSON, and pushed record streams). `scripts/fuzz` writes them before each run.
public enum FuzzSeeds {
    /// Writes the seeds of `target` ("Segments", "Events" or "RequestBodies") into `folder`.
    public static func write(target: String, to folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var seeds: [[UInt8]] = []
        let (segments, events) = try sampleLog()
        let truncated = segments.map { Array($0.prefix($0.count * 2 / 3)) }  // torn tails
        switch target {
        case "Segments": seeds = segments + truncated
        case "Events": seeds = events
        default:
            let bodies = [
                #"{"amount": 12000, "currency": "KRW", "date": "2026-03-01T12:00:00+09:00", "memo": "점심", "tags": ["work"]}"#,
                #"{"name": "Food", "kind": "expense", "icon": "🍚"}"#,
                #"{"title": "Run", "checks": [true, false], "isChallenge": true, "startDate": "2026-03-01"}"#,
                #"{"value": {"a": [1, 2.5, null, "x"]}, "scope": "local"}"#,
            ]
            for (route, body) in bodies.enumerated() { seeds.append([UInt8(route)] + Array(body.utf8)) }
            var stream: [UInt8] = []
            for event in events { event.withUnsafeBytes { EventRecords.append($0, to: &stream) } }
            seeds.append([4] + stream)
        }
        for (index, seed) in seeds.enumerated() {
            try Data(seed).write(to: URL(fileURLWithPath: "\(folder)/seed-\(index)"))
        }
    }

    /// A small log of every kind of event, appended in several calls (so several frames and
    /// segments): its segment files' bytes, and each event's encoding.
    static func sampleLog() throws -> (segments: [[UInt8]], events: [[UInt8]]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tally-fuzz-seeds-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = LogConfiguration()
        configuration.segmentSizeLimit = 1 << 10
        let writer = try LogWriter(directory: directory, localOrigin: .random(), localOnlyOrigin: .random(), configuration: configuration)
        try writer.append(SampleEvents.everyKind())
        for amount in 1...20 { try writer.append([SampleEvents.expenseCreate(amount: Int64(amount))]) }
        writer.close()
        var events: [[UInt8]] = []
        try LogReader(directory: directory).forEachEncodedEvent { _, bytes in events.append(Array(bytes)) }
        let segments = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".tseg") }.sorted()
            .map { Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + $0))) }
        return (segments, events)
    }
}
