import Foundation

/// Everything that can go wrong reading or writing the log. Each message says what happened,
/// where, and what the operator can do about it.
public enum LogError: Error, Sendable, CustomStringConvertible {
    /// Damage before the tail: the log refuses to open rather than guess.
    case corrupt(segment: String, offset: Int, reason: String)
    /// Another process holds the writer lock.
    case writerLocked(directory: String, waitedSeconds: Double)
    /// A write or fsync failed earlier; this writer acknowledges nothing any more.
    case writerStopped(cause: String)
    /// The archive a write must reach first (a cluster's PostgreSQL: `SegmentArchive`) did not
    /// take it: nothing of it was written or acknowledged, and this writer writes no more (the
    /// ledger is opened again, caught up, once the archive answers).
    case notArchived(cause: String)
    /// A system call failed.
    case io(operation: String, path: String, errno: Int32)
    /// The log directory is missing or not a Tally log.
    case notALog(path: String, reason: String)
    /// What the caller asked for cannot be done (an event too large, `init` over a replica, …):
    /// the caller's mistake.
    case rejected(reason: String)
    /// Something that checks upstream guarantee did not hold (events verified as continuing
    /// their chains do not, a verified head disagrees with the segments): a bug or a race, never
    /// the caller's mistake (HTTP 500).
    case brokenInvariant(reason: String)

    /// A short stable code for scripts and HTTP error bodies.
    public var code: String {
        switch self {
        case .corrupt: "log_corrupt"
        case .writerLocked: "writer_locked"
        case .writerStopped: "writer_stopped"
        case .notArchived: "not_archived"
        case .io: "io_error"
        case .notALog: "not_a_log"
        case .rejected: "rejected"
        case .brokenInvariant: "broken_invariant"
        }
    }

    public var description: String {
        switch self {
        case .corrupt(let segment, let offset, let reason):
            "log damaged in segment \(segment) at offset \(offset): \(reason). Nothing was changed. "
                + "Run 'tally audit verify' for details; 'tally log repair' cuts the log at that point (moving what follows aside)."
        case .writerLocked(let directory, let waited):
            "another process is writing to \(directory) (waited \(String(format: "%.1f", waited)) s for its writer lock); "
                + "stop it, or send the change through it (e.g. the running server), then retry"
        case .writerStopped(let cause):
            "the log writer stopped after a failed write (\(cause)); nothing after it was acknowledged. "
                + "Fix the cause (disk full? failing disk?) and restart: recovery keeps every acknowledged event"
        case .notArchived(let cause):
            "the write did not reach the cluster's archive (\(cause)); nothing of it was acknowledged. Retry shortly: the ledger opens again once the archive answers"
        case .io(let operation, let path, let errno):
            "\(operation) \(path) failed: \(String(cString: strerror(errno))) (errno \(errno))"
        case .notALog(let path, let reason):
            "\(path) is not a Tally log: \(reason)"
        case .rejected(let reason):
            "rejected: \(reason)"
        case .brokenInvariant(let reason):
            "internal error: \(reason); nothing was written. Please report it; 'tally audit verify' checks the log"
        }
    }
}
