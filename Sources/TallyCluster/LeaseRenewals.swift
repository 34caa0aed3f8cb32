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
        /// Resumed with whether edits wait, or why the lease was not renewed (`fenced`: it is
        /// no longer this node's).
        let answer: CheckedContinuation<Result<Bool, any Error>, Never>
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
    /// has taken it, or what kept it from being answered.
    public func renew(_ lease: ClusterLease) async throws -> Bool {
        let outcome = await withCheckedContinuation { (answer: CheckedContinuation<Result<Bool, any Error>, Never>) in
            let startsSending = state.withLock { state in
                state.asked.append(Asked(lease: lease, answer: answer))
                defer { state.sending = true }
                return !state.sending
            }
            if startsSending { Task { await self.sendAll() } }
        }
        return try outcome.get()
    }

    /// Sends what is asked, a statement at a time, until nothing is, and answers every renewal
    /// asked: those the statement renewed at once; each of the others alone, beside it
    /// (`ClusterArchive.renewUnlocked` leaves out a row another transaction holds, and the
    /// lease renewed alone waits for it). Every call is given up on after `limit`, so no
    /// renewal waits forever.
    private func sendAll() async {
        try? await Task.sleep(for: Self.gathering)
        while true {
            let batch = state.withLock { state in
                let batch = state.asked.prefix(ClusterArchive.renewalsPerStatement)
                state.asked.removeFirst(batch.count)
                if batch.isEmpty { state.sending = false }
                return Array(batch)
            }
            guard !batch.isEmpty else { return }
            statements.add(1, ordering: .relaxed)
            let (archive, duration, limit, leases) = (archive, duration, limit, batch.map(\.lease))
            let renewed: [ClusterLease: Bool]
            do {
                renewed = try await answered("a renewal of \(leases.count) leases", within: limit) { try await archive.renewUnlocked(leases, for: duration) }
            } catch {
                for asked in batch { asked.answer.resume(returning: .failure(error)) }
                continue
            }
            for asked in batch {
                if let editsWait = renewed[asked.lease] {
                    asked.answer.resume(returning: .success(editsWait))
                    continue
                }
                Task {
                    let lease = asked.lease
                    do {
                        let editsWait = try await answered("a renewal of '\(lease.ledger)'", within: limit) { try await archive.renew(lease, for: duration) }
                        asked.answer.resume(returning: .success(editsWait))
                    } catch {
                        asked.answer.resume(returning: .failure(error))
                    }
                }
            }
        }
    }
}
