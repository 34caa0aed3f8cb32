import Foundation

/// Concurrent single writes appended as one batch (one `fdatasync`) and projected as one
/// transaction, by one task at a time — the leader, on one of the `BlockingThreads`' write-round threads — while
/// the others are suspended on a continuation until their outcome is set.
///
/// The log and the projection each group concurrent callers by themselves, but every waiter
/// there sleeps on one shared condition: each flush and each projection woke every waiting
/// writer, and each woken writer queued for the same mutex (~21 context switches per HTTP
/// create with 64 writers). Here a writer is woken once, when its write is durable and
/// projected, or to lead the next round.
///
/// A round: the leader takes every queued write (its own among them), appends them together;
/// if the log refuses the batch, each write is appended alone, so that one bad write (an
/// event too large) does not fail its neighbours. What was appended is projected together.
/// Then the leader hands the lead to the first write queued meanwhile, if any, and returns.
final class WriteBatcher<Draft, Written>: @unchecked Sendable {
    private let append: ([Draft]) throws -> [Written]
    private let project: ([Written]) throws -> Void
    private let lock = NSLock()
    // Guarded by `lock`:
    private var queue: [Pending] = []
    private var leading = false

    /// What a write gets back: the durable result, and the error that kept it out of the views
    /// if projecting failed (it is in the log all the same).
    typealias Outcome = (written: Written, projectionError: (any Error)?)

    // @unchecked: `resume` and `outcome` are set before the write is woken and read after (the
    // continuation orders them); `queue`, which holds it meanwhile, is guarded by `lock`.
    private final class Pending: @unchecked Sendable {
        let draft: Draft
        /// How the write is woken: resumed with true when handed the lead, false when done.
        var resume: CheckedContinuation<Bool, Never>?
        /// Set before the write is woken, read after; still nil when woken to lead the next
        /// round instead.
        var outcome: Result<Outcome, any Error>?

        init(_ draft: Draft) { self.draft = draft }

        func wake(toLead: Bool) {
            resume?.resume(returning: toLead)
        }
    }

    /// `append` makes drafts durable (all or none) and returns them written, in order;
    /// `project` shows written drafts in the views.
    init(append: @escaping ([Draft]) throws -> [Written], project: @escaping ([Written]) throws -> Void) {
        self.append = append
        self.project = project
    }

    /// Writes waiting for the next round (for tests).
    var queued: Int { lock.withLock { queue.count } }

    /// Appends and projects `draft` (with whatever else is queued); throws if it was not
    /// appended. Suspends meanwhile; a round it leads runs on one of the `BlockingThreads`
    /// (a round blocks in `fdatasync`).
    func write(_ draft: Draft) async throws -> Outcome {
        let own = Pending(draft)
        let leads = await withCheckedContinuation { (resume: CheckedContinuation<Bool, Never>) in
            lock.lock()
            own.resume = resume
            queue.append(own)
            let leads = !leading
            leading = true
            lock.unlock()
            if leads { resume.resume(returning: true) }
        }
        guard leads else { return try (own.outcome ?? .failure(Unanswered())).get() }
        try await BlockingThreads.runWriteRound { self.lead(own) }
        return try (own.outcome ?? .failure(Unanswered())).get()  // `run` set every outcome of the round
    }

    /// Runs one round as its leader (`leading` is set for it) and hands the lead on.
    private func lead(_ own: Pending) {
        lock.lock()
        let round = queue
        queue = []
        lock.unlock()

        run(round, leader: own)

        lock.lock()
        if let next = queue.first {  // `leading` stays true: the lead passes to `next`
            lock.unlock()
            next.wake(toLead: true)
        } else {
            leading = false
            lock.unlock()
        }
    }

    /// What a write would get if `run` left its outcome unset (it does not).
    struct Unanswered: Error {}

    /// Appends and projects one round, sets every outcome, and wakes every write but the leader's.
    private func run(_ round: [Pending], leader: Pending) {
        var appended: [(Pending, Written)] = []
        do {
            appended = Array(zip(round, try append(round.map(\.draft))))
        } catch {
            for pending in round {
                do {
                    if let written = try append([pending.draft]).first { appended.append((pending, written)) }
                } catch {
                    pending.outcome = .failure(error)
                }
            }
        }
        var projectionError: (any Error)?
        if !appended.isEmpty {
            do { try project(appended.map(\.1)) } catch { projectionError = error }
        }
        for (pending, written) in appended { pending.outcome = .success((written, projectionError)) }
        for pending in round where pending.outcome == nil { pending.outcome = .failure(Unanswered()) }
        for pending in round where pending !== leader { pending.wake(toLead: false) }
    }
}
