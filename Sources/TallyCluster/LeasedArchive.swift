import Dispatch
import Synchronization
import TallyLog

/// A ledger's writer's `SegmentArchive` on a cluster: each write goes to PostgreSQL
/// (`ClusterArchive.archive`) under the lease this node holds, and the writer writes it
/// locally only once PostgreSQL has committed it.
///
/// The writer calls `archive` on its flushing thread and must wait for the commit, so this
/// blocks that thread on a detached task: it must never be one of Swift's cooperative threads
/// (a ledger's writes run on `BlockingThreads`), or the wait could starve the task it waits for.
public final class LeasedArchive: SegmentArchive {
    let archive: ClusterArchive
    /// The lease writes are archived under (renewing it keeps its epoch; a new one needs a new
    /// writer, opened after catching up).
    public let lease: ClusterLease

    public init(_ archive: ClusterArchive, lease: ClusterLease) { (self.archive, self.lease) = (archive, lease) }

    /// How long a write waits for PostgreSQL's answer (its transaction times out in 10 s).
    static let answerTimeoutSeconds = 10

    public func archive(_ appends: [SegmentAppend]) throws {
        let (archive, lease) = (archive, lease)
        let outcome = Outcome()
        Task.detached {
            let result = await Result(catching: { try await archive.archive(appends, under: lease) })
            outcome.result.withLock { $0 = result }
            outcome.done.signal()
        }
        // An answer that never comes (a connection cut without a reset) is a failed archive: the
        // writer stops, and a retry later finds the write archived or not (`ClusterArchive.archive`).
        guard outcome.done.wait(timeout: .now() + .seconds(Self.answerTimeoutSeconds)) == .success else {
            throw ClusterRefusal.invalid("PostgreSQL did not answer within \(Self.answerTimeoutSeconds) s (ledger '\(lease.ledger)')")
        }
        try outcome.result.withLock { $0 }?.get()
    }

    /// What the detached task hands back to the waiting writer.
    private final class Outcome: Sendable {
        let result = Mutex<Result<Void, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing body.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
