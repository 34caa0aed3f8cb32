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

    public init(segment: String, offset: Int, event: String?, problem: String) {
        (self.segment, self.offset, self.event, self.problem) = (segment, offset, event, problem)
    }

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
    /// Per replicated origin: which key signed its chain and how far (the audit's proof of
    /// authorship), in origin order.
    public var authorship: [OriginAuthorship] = []
}

/// Who signed one origin's chain, as the log shows it.
public struct OriginAuthorship: Sendable {
    public var origin: ReplicaID
    /// The keys that signed it, oldest first (more than one after a rotation).
    public var keys: [OriginKey]
    /// The highest sequence covered by a valid signed head (0: none).
    public var signedThrough: UInt64
    /// The origin's last sequence in the log.
    public var lastSequence: UInt64
}

/// Checks the signatures frames of a log as it is read: every head and rotation must carry a
/// valid signature, of the key pinned for its origin by the first head seen (a rotation moves
/// the pin only when signed by the pinned key), and a head must agree with the chain it names.
struct AuthorshipCheck {
    var keys: [ReplicaID: [OriginKey]] = [:]
    var signedThrough: [ReplicaID: UInt64] = [:]
    var localOnly: Set<ReplicaID> = []

    mutating func check(_ records: [SignatureRecord], against head: LogHead, segment: String, offset: Int, into report: inout VerificationReport) {
        func finding(_ origin: ReplicaID, _ problem: String) {
            report.findings.append(VerificationFinding(segment: segment, offset: offset, event: "\(origin)", problem: problem))
        }
        for record in records {
            switch record {
            case .head(let signed):
                let label = "signed head #\(signed.sequence) of origin \(signed.origin)"
                guard signed.isValid else { finding(signed.origin, "\(label): the signature is not valid (forged or damaged)"); continue }
                if let pinned = keys[signed.origin]?.last, pinned != signed.key {
                    finding(signed.origin, "\(label) is signed with key \(signed.key), not the origin's key \(pinned) (re-signed by another replica)")
                    continue
                }
                if keys[signed.origin] == nil { keys[signed.origin] = [signed.key] }
                guard let chain = head.chains[signed.origin], signed.sequence <= chain.sequence else {
                    finding(signed.origin, "\(label) comes before that event is in the log"); continue
                }
                if signed.sequence == chain.sequence, signed.hash != chain.hash {
                    finding(signed.origin, "\(label) names another event than the log holds at that sequence (a fork or an edit)"); continue
                }
                signedThrough[signed.origin] = max(signedThrough[signed.origin] ?? 0, signed.sequence)
            case .rotation(let rotation):
                let label = "key rotation of origin \(rotation.origin) after #\(rotation.afterSequence)"
                guard rotation.isValid else { finding(rotation.origin, "\(label): the signature is not valid (forged or damaged)"); continue }
                if let pinned = keys[rotation.origin]?.last, pinned != rotation.oldKey {
                    finding(rotation.origin, "\(label) is signed with key \(rotation.oldKey), not the origin's key \(pinned)"); continue
                }
                keys[rotation.origin, default: [rotation.oldKey]].append(rotation.newKey)
            }
        }
    }

    func summary(of head: LogHead) -> [OriginAuthorship] {
        head.chains.keys.sorted().filter { !localOnly.contains($0) }.map { origin in
            OriginAuthorship(origin: origin, keys: keys[origin] ?? [], signedThrough: signedThrough[origin] ?? 0, lastSequence: head.chains[origin]!.sequence)
        }
    }
}

/// Checks a whole log: every checksum, index continuity, every origin's sequence (1, 2, 3 …
/// without gaps) and hash chain, each seal against the events before it, and every signature
/// (`AuthorshipCheck`). An edited event
/// breaks its successor's `previousHash`; a dropped or reordered one breaks the sequence.
public enum LogVerifier {
    /// Verifies the log in `directory`; stops at the first damaged frame (what follows it cannot be trusted).
    public static func verify(directory: String, progress: (Int) -> Void = { _ in }) throws -> VerificationReport {
        var report = VerificationReport()
        let names = try SegmentDirectory.segmentNames(in: directory)
        report.segments = names.count
        var head = LogHead()
        var authorship = AuthorshipCheck()
        var expectedIndex: UInt64 = 1
        for (position, name) in names.enumerated() {
            if SegmentFormat.firstIndex(fromFileName: name) != expectedIndex {
                report.findings.append(
                    VerificationFinding(
                        segment: name, offset: 0, event: "index \(expectedIndex)",
                        problem: "segment starts at index \(SegmentFormat.firstIndex(fromFileName: name)!), expected \(expectedIndex): a segment is missing"))
                return report
            }
            do {
                let scan = try SegmentScanner.scan(path: directory + "/" + name, isLast: position == names.count - 1) { frame in
                    if frame.header.type == .signatures {
                        authorship.check(try SignatureRecord.decodeList(frame.payload), against: head, segment: name, offset: frame.offset, into: &report)
                        return
                    }
                    var index = frame.header.firstIndex
                    try EventBatch.forEachEvent(in: frame.payload, count: frame.header.eventCount) { bytes in
                        defer { index += 1 }
                        let event: Event
                        do { event = try EventCodec.decode(bytes) } catch {
                            report.findings.append(
                                VerificationFinding(segment: name, offset: frame.offset, event: "index \(index)", problem: "does not decode: \(error)"))
                            return
                        }
                        let label = "\(event.origin)#\(event.sequence)"
                        let chain = head.chains[event.origin]
                        let expected = (chain?.sequence ?? 0) + 1
                        if event.sequence != expected {
                            let what =
                                event.sequence > expected
                                ? "events #\(expected)…#\(event.sequence - 1) of this origin are missing (dropped)"
                                : "sequence goes back from #\(expected - 1) (reordered or duplicated)"
                            report.findings.append(VerificationFinding(segment: name, offset: frame.offset, event: label, problem: what))
                        } else if event.previousHash != (chain?.hash ?? .zero) {
                            report.findings.append(
                                VerificationFinding(
                                    segment: name, offset: frame.offset, event: label,
                                    problem:
                                        "hash chain broken: its previousHash does not match #\(event.sequence - 1) as stored (#\(event.sequence - 1) was edited, or this event forged)"
                                ))
                        }
                        head.advance(past: event, hash: EventCodec.hash(bytes))
                        if event.isLocalOnly { authorship.localOnly.insert(event.origin) }
                        report.events += 1
                        if report.events % 100_000 == 0 { progress(report.events) }
                    }
                }
                if let seal = scan.seal, seal != head {
                    report.findings.append(
                        VerificationFinding(
                            segment: name, offset: scan.validLength, event: nil,
                            problem: "seal summary does not match the events before it (events edited, dropped or reordered)"))
                }
                if let torn = scan.tornTail {
                    report.tail =
                        "\(name): \(scan.fileLength - scan.validLength) bytes after the last complete frame (\(torn)); in flight, or torn by a crash and cut by the next writer"
                }
                expectedIndex = scan.nextIndex
            } catch let LogError.corrupt(segment, offset, reason) {
                report.findings.append(VerificationFinding(segment: segment, offset: offset, event: "index ≥ \(head.lastIndex + 1)", problem: reason))
                return report
            } catch let error as DecodingError {
                report.findings.append(
                    VerificationFinding(
                        segment: name, offset: 0, event: "index ≥ \(head.lastIndex + 1)", problem: "frame payload does not split into events: \(error)"))
                return report
            }
        }
        report.origins = head.chains.count
        report.authorship = authorship.summary(of: head)
        return report
    }
}
