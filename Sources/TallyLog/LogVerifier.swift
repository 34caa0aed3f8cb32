import Foundation
import TallyCore

/// One problem `tally audit verify` found.
public struct VerificationFinding: Sendable, CustomStringConvertible {
    /// Segment file.
    public var segment: String
    /// Byte offset of the frame (or of the damage) in the segment.
    public var offset: Int
    /// The event concerned, as `origin#sequence` or `index N`, when known.
    public var event: String?
    /// What is wrong.
    public var problem: String

    public var description: String {
        "segment \(segment) offset \(offset)" + (event.map { " event \($0)" } ?? "") + ": \(problem)"
    }
}

/// What verification saw.
public struct VerificationReport: Sendable {
    /// Events checked.
    public var events = 0
    /// Origins whose chains were checked.
    public var origins = 0
    /// Segments read.
    public var segments = 0
    /// Problems, in log order; empty when the log is intact.
    public var findings: [VerificationFinding] = []
    /// Bytes after the last complete frame of the newest segment (an in-flight or torn write).
    public var tail: String?
}

/// Checks a whole log: every checksum, index continuity, every origin's sequence (1, 2, 3 …
/// without gaps) and hash chain, and each seal against the events before it. An edited event
/// breaks its successor's `previousHash`; a dropped or reordered one breaks the sequence.
public enum LogVerifier {
    /// Verifies the log in `directory`; stops at the first damaged frame (what follows it cannot be trusted).
    public static func verify(directory: String, progress: (Int) -> Void = { _ in }) throws -> VerificationReport {
        var report = VerificationReport()
        let names = try SegmentDirectory.segmentNames(in: directory)
        report.segments = names.count
        var head = LogHead()
        var expectedIndex: UInt64 = 1
        for (position, name) in names.enumerated() {
            if SegmentFormat.firstIndex(fromFileName: name) != expectedIndex {
                report.findings.append(VerificationFinding(segment: name, offset: 0, event: "index \(expectedIndex)",
                    problem: "segment starts at index \(SegmentFormat.firstIndex(fromFileName: name)!), expected \(expectedIndex): a segment is missing"))
                return report
            }
            do {
                let scan = try SegmentScanner.scan(path: directory + "/" + name, isLast: position == names.count - 1) { frame in
                    var index = frame.header.firstIndex
                    try EventBatch.forEachEvent(in: frame.payload, count: frame.header.eventCount) { bytes in
                        defer { index += 1 }
                        let event: Event
                        do { event = try EventCodec.decode(bytes) } catch {
                            report.findings.append(VerificationFinding(segment: name, offset: frame.offset, event: "index \(index)", problem: "does not decode: \(error)"))
                            return
                        }
                        let label = "\(event.origin)#\(event.sequence)"
                        let chain = head.chains[event.origin]
                        let expected = (chain?.sequence ?? 0) + 1
                        if event.sequence != expected {
                            let what = event.sequence > expected ? "events #\(expected)…#\(event.sequence - 1) of this origin are missing (dropped)"
                                : "sequence goes back from #\(expected - 1) (reordered or duplicated)"
                            report.findings.append(VerificationFinding(segment: name, offset: frame.offset, event: label, problem: what))
                        } else if event.previousHash != (chain?.hash ?? .zero) {
                            report.findings.append(VerificationFinding(segment: name, offset: frame.offset, event: label,
                                problem: "hash chain broken: its previousHash does not match #\(event.sequence - 1) as stored (#\(event.sequence - 1) was edited, or this event forged)"))
                        }
                        head.advance(past: event, hash: EventCodec.hash(bytes))
                        report.events += 1
                        if report.events % 100_000 == 0 { progress(report.events) }
                    }
                }
                if let seal = scan.seal, seal != head {
                    report.findings.append(VerificationFinding(segment: name, offset: scan.validLength, event: nil,
                        problem: "seal summary does not match the events before it (events edited, dropped or reordered)"))
                }
                if let torn = scan.tornTail {
                    report.tail = "\(name): \(scan.fileLength - scan.validLength) bytes after the last complete frame (\(torn)); in flight, or torn by a crash and cut by the next writer"
                }
                expectedIndex = scan.nextIndex
            } catch let LogError.corrupt(segment, offset, reason) {
                report.findings.append(VerificationFinding(segment: segment, offset: offset, event: "index ≥ \(head.lastIndex + 1)", problem: reason))
                return report
            } catch let error as DecodingError {
                report.findings.append(VerificationFinding(segment: name, offset: 0, event: "index ≥ \(head.lastIndex + 1)", problem: "frame payload does not split into events: \(error)"))
                return report
            }
        }
        report.origins = head.chains.count
        return report
    }
}
