import Synchronization

/// A node's lease renewals, sent to PostgreSQL together. Every lease kept here is renewed on
/// the same node-wide ticks (`ClusterHosting.nextRenewal`); the keepers that wake at a tick
/// ask here, and what is asked while a statement is on its way goes in the next one. So a
/// node's renewals cost a transaction or two a tick, not one per open ledger — which, with
/// 1,000 ledgers open and 6-second leases, was 500 transactions a second, each a commit
/// PostgreSQL flushes to disk.
public final class LeaseRenewals: Sendable {
    private let archive: ClusterArchive
    /// How long a renewed lease lasts.
    private let duration: Duration
    /// How long one statement may take before everyone in it is answered with a failure.
    private let limit: Duration

    private struct Asked: Sendable {
        let lease: ClusterLease
        /// Resumed with whether edits wait (nil: the lease is no longer this node's).
        let answer: CheckedContinuation<Result<Bool?, any Error>, Never>
    }

    /// The renewals asked and not yet sent, and whether a task is sending them.
    private let state = Mutex<(asked: [Asked], sending: Bool)>(([], false))
    /// The statements sent so far (for tests).
    let statements = Atomic<Int>(0)

    /// How long the first renewal asked waits for the others of its tick before it is sent.
    static let gathering: Duration = .milliseconds(20)

    public init(archive: ClusterArchive, duration: Duration, limit: Duration) {
        (self.archive, self.duration, self.limit) = (archive, duration, limit)
    }

    /// Renews `lease` (in one statement with the others asked about now). Returns whether the
    /// operator's edits of its ledger wait; throws `ClusterRefusal.fenced` when another node
    /// has taken it, or what kept the statement from being answered.
    public func renew(_ lease: ClusterLease) async throws -> Bool {
        let outcome = await withCheckedContinuation { (answer: CheckedContinuation<Result<Bool?, any Error>, Never>) in
            let startsSending = state.withLock { state in
                state.asked.append(Asked(lease: lease, answer: answer))
                defer { state.sending = true }
                return !state.sending
            }
            if startsSending { Task { await self.sendAll() } }
        }
        guard let editsWait = try outcome.get() else { throw ClusterRefusal.fenced(ledger: lease.ledger, epoch: lease.epoch) }
        return editsWait
    }

    /// Sends what is asked, a statement at a time, until nothing is; answers every renewal
    /// asked (each statement is given up on after `limit`, so none waits forever).
    private func sendAll() async {
        try? await Task.sleep(for: Self.gathering)
        while true {
            let batch = state.withLock { state in
                let batch = state.asked
                state.asked = []
                if batch.isEmpty { state.sending = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            let (archive, duration, leases) = (archive, duration, batch.map(\.lease))
            statements.add(1, ordering: .relaxed)
            let outcome: Result<[ClusterLease: Bool], any Error>
            do {
                outcome = .success(try await answered("a renewal of \(leases.count) leases", within: limit) { try await archive.renew(leases, for: duration) })
            } catch {
                outcome = .failure(error)
            }
            for asked in batch { asked.answer.resume(returning: outcome.map { $0[asked.lease] }) }
        }
    }
}
