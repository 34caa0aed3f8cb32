import Foundation
import Synchronization
import TallyLog

/// Brings a node's log of one ledger to where the ledger's archive ends (issue 32), so that
/// the node may take its lease: a node that is behind never serves it.
///
/// The log is held (`LogReplay`: the writer lock, its torn tail cut), then compared with the
/// archive where it ends: its last bytes must be an append the archive holds as they are, or a
/// prefix of one (a crash tore a write of several frames: the log is cut back to where that
/// append starts, and the archive replays it whole). A log that holds anything else — bytes
/// the archive does not have, never acknowledged, or another ledger's — is `diverged`: the
/// caller moves it aside and starts from nothing. Then the archive's appends past the log's
/// end are written in pages, and the log is read through the verifier (checksums, chains,
/// signatures) as any peer's bytes are.
public struct ClusterCatchUp: Sendable {
    public let archive: ClusterArchive
    /// Runs blocking file work off Swift's cooperative threads (`BlockingThreads.run`).
    let blocking: @Sendable (@escaping @Sendable () throws -> Void) async throws -> Void
    /// The most appends read from PostgreSQL at once (a bulk append is up to a segment).
    static let pageSize = 256

    public init(archive: ClusterArchive, blocking: @escaping @Sendable (@escaping @Sendable () throws -> Void) async throws -> Void) {
        (self.archive, self.blocking) = (archive, blocking)
    }

    /// What a catch-up did.
    public struct Report: Sendable {
        /// Where the log ends now: where the archive ended when it was read.
        public var end: LogEnd?
        /// Appends and bytes written from the archive.
        public var appends = 0, bytes = 0
        /// Bytes of a torn write cut from the log's end first.
        public var cut = 0
    }

    /// Brings the log in `logDirectory` (a ledger folder's `log`) to the end of `ledger`'s archive.
    public func catchUp(_ ledger: String, logDirectory: String) async throws -> Report {
        let log = try await open(logDirectory)
        defer { log.release() }
        var report = Report()
        try await align(log, with: ledger, report: &report)
        while true {
            let (archive, end) = (archive, log.end)
            let page = try await answered("the archive of '\(ledger)'", within: .seconds(30)) {
                try await archive.appends(of: ledger, after: end, limit: Self.pageSize).map(\.append)
            }
            guard !page.isEmpty else { break }
            try await run { try log.replay(page) }
            report.appends += page.count
            report.bytes += page.reduce(0) { $0 + $1.bytes.count }
        }
        if report.appends > 0 || report.cut > 0 {
            try await run {
                let verified = try LogVerifier.verify(directory: logDirectory)
                if let finding = verified.findings.first {
                    throw ClusterRefusal.invalid("ledger '\(ledger)' as archived does not verify: \(finding)")
                }
            }
        }
        report.end = log.end
        return report
    }

    private func open(_ logDirectory: String) async throws -> LogReplay {
        try await run { try LogReplay(logDirectory: logDirectory, lockTimeout: 5) }
    }

    /// Runs `work` through `blocking` and hands back what it returned.
    private func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        let outcome = Outcome<Value>()
        try await blocking {
            let value = try work()
            outcome.value.withLock { $0 = value }
        }
        guard let value = outcome.value.withLock({ $0 }) else { throw CancellationError() }
        return value
    }

    private final class Outcome<Value: Sendable>: Sendable {
        let value = Mutex<Value?>(nil)
    }

    /// Checks the log's last bytes against the archive, cutting a torn append back to its start
    /// and finishing a seal the archive holds; throws `diverged` for anything else.
    private func align(_ log: LogReplay, with ledger: String, report: inout Report) async throws {
        guard let end = log.end else { return }
        let archive = archive
        guard
            let last = try await answered(
                "the archive of '\(ledger)'", within: .seconds(10), { try await archive.lastAppend(of: ledger, in: end.segment, before: end.length) })
        else {
            throw ClusterCatchUpError.diverged(ledger: ledger, local: end, reason: "the archive holds nothing of \(end.segment) before \(end.length)")
        }
        let lastEnd = last.offset + last.bytes.count
        guard lastEnd >= end.length else {
            throw ClusterCatchUpError.diverged(ledger: ledger, local: end, reason: "it holds \(end.length - lastEnd) bytes past the archive's end")
        }
        let local = try await run { try log.bytes(of: end.segment, from: last.offset, upTo: end.length) }
        guard local[...] == last.bytes[..<local.count] else {
            throw ClusterCatchUpError.diverged(ledger: ledger, local: end, reason: "its bytes at \(last.offset) of \(end.segment) are not the archive's")
        }
        if lastEnd > end.length {
            guard !end.sealed else { throw ClusterCatchUpError.diverged(ledger: ledger, local: end, reason: "a sealed segment the archive goes on in") }
            report.cut = end.length - last.offset
            try await run { try log.cut(to: last.offset) }
        } else if last.seals != end.sealed {
            guard last.seals else { throw ClusterCatchUpError.diverged(ledger: ledger, local: end, reason: "a seal the archive does not hold") }
            try await run { try log.seal() }
        }
    }

}

/// Why a node's log of a ledger cannot be caught up where it is.
public enum ClusterCatchUpError: Error, CustomStringConvertible {
    /// The log holds what the archive does not: bytes never acknowledged (written before the
    /// ledger was archived, or by a node that lost its lease mid-write), or another ledger's.
    /// The node's copy is a cache: moved aside, it is rebuilt from the archive.
    case diverged(ledger: String, local: LogEnd, reason: String)

    public var description: String {
        switch self {
        case .diverged(let ledger, let local, let reason):
            "this node's log of ledger '\(ledger)' (ending in \(local)) is not a prefix of the archive: \(reason)"
        }
    }
}
