import Foundation
import TallyLog

/// Concurrent writers share one projection transaction, the way they share one `fdatasync`.
///
/// Each writer hands over the events it just appended (durable already) and waits until the
/// views show them. Whoever finds no transaction running becomes the leader: it takes every
/// handed-over event that follows the views' checkpoint without a gap and applies them all in
/// one transaction (`Projector.apply`, which skips what is already applied and moves the
/// checkpoint in the same transaction: exactly once, as before); the others wait for it.
///
/// A gap is an event appended but not (yet) handed over: another writer between its append and
/// its hand-over (microseconds), or an append that does not come through here (a peer's events,
/// a bulk load), whose owner catches the views up itself. A writer waiting behind a gap looks
/// at the checkpoint again now and then, and after `gapPatience` catches up from the log itself.
public final class ProjectionGroupCommit: @unchecked Sendable {
    private let projector: Projector
    private let condition = NSCondition()
    // Guarded by `condition`:
    private var handedOver: [[LoggedEvent]] = []  // each writer's events, as appended (contiguous)
    private var projected: UInt64 = 0  // the checkpoint as last seen
    private var applying = false
    private var failed: (through: UInt64, error: any Error)?
    /// How long a writer waits behind a gap before reading the missing events from the log.
    let gapPatience: TimeInterval = 0.05
    /// Handed-over batches kept at most (a gap that never fills must not hold memory forever).
    let capacity = 10_000

    /// Starts where the projector's progress says the views are (the first write after an
    /// open then finds no gap to look into).
    public init(projector: Projector) {
        self.projector = projector
        projected = projector.progress.index
    }

    /// Returns once the views show `events` (appended in this order, contiguous, durable).
    /// Throws when the transaction that should have applied them failed; they stay in the log,
    /// and a later projection or catch-up applies them.
    public func project(_ events: [LoggedEvent]) throws {
        guard let target = events.last?.index else { return }
        condition.lock()
        defer { condition.unlock() }
        if handedOver.count >= capacity { handedOver.removeAll() }  // read from the log instead
        // No one is woken: while a leader applies, its waiters need nothing new, and with no
        // leader this writer leads itself, taking every contiguous batch (others' too). A
        // broadcast per hand-over woke every waiting writer each time — with 64 of them, ~2,000
        // wake-ups per group commit.
        if target > projected { handedOver.append(events) }
        // Once the views this remembers show the events, they are shown: a rebuild that swaps
        // in a generation behind them (its catch-up ended before these writes) is caught up
        // from the log before anyone uses it (`CurrentViews.followingLink`).
        try waitUntilProjected(through: target)
    }

    /// Brings the views up to a bulk append that reached log index `last` as the leader (its
    /// events were not handed over: the owner catches the views up itself): waits for the
    /// transaction under way, then projects from the log (`Projector.catchUpInBulk`) and wakes
    /// whoever waits.
    public func catchUp(afterBulkThrough last: UInt64) throws {
        condition.lock()
        defer { condition.unlock() }
        while applying { condition.wait() }
        try lead(applying: [], bulkThrough: last)
    }

    private func waitUntilProjected(through target: UInt64) throws {
        var deadline = Date(timeIntervalSinceNow: gapPatience)
        while projected < target {
            if let failed, failed.through >= target { throw failed.error }
            if applying {
                condition.wait()
                continue
            }
            let run = contiguousRun()
            if !run.isEmpty {
                try lead(applying: run)
                continue
            }
            // A gap: the next event is not here. Has someone else projected past it? (Asked
            // of the views' writer, which is open: no reader is opened for it.)
            condition.unlock()
            let checkpoint = (try? projector.checkpointOnWriter()) ?? projected
            condition.lock()
            if checkpoint != projected {
                settle(at: checkpoint)
                deadline = Date(timeIntervalSinceNow: gapPatience)
                continue
            }
            if Date() < deadline {
                _ = condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.005)))
                continue
            }
            if !applying { try lead(applying: []) }  // another may have taken the lead while the lock was free
        }
    }

    /// Applies `run` as the leader (the lock released meanwhile), then records where the views
    /// are, or the failure, and wakes the waiters. With nothing to apply (a gap), or when the
    /// apply fails — the views are not where this remembered them (a rebuild swapped them), or
    /// the disk under them is full — the views catch up from the log instead, as the next
    /// reader would; only if that fails too are the waiters told.
    private func lead(applying run: [LoggedEvent], bulkThrough: UInt64? = nil) throws {
        applying = true
        condition.unlock()
        var outcome: Result<UInt64, any Error>
        do {
            if let bulkThrough {
                // A new generation that could not be written (no room for a second copy of
                // the views) leaves the views to a catch-up in place.
                if (try? projector.catchUpInBulk(through: bulkThrough)) == nil { try projector.catchUp() }
                outcome = .success(try projector.checkpoint())
            } else if !run.isEmpty, let applied = try? projector.apply(run) {
                outcome = .success(applied.checkpoint)  // read where it was written: no reader opened
            } else {
                try projector.catchUp()
                outcome = .success(try projector.checkpoint())
            }
        } catch {
            outcome = .failure(error)
        }
        condition.lock()
        applying = false
        condition.broadcast()
        switch outcome {
        case .success(let checkpoint):
            settle(at: checkpoint)
        case .failure(let error):
            // Whoever waits for an event handed over so far is told; the events stay in the
            // log, and the next writer (or restart) projects them.
            let through = handedOver.compactMap(\.last?.index).max() ?? projected
            failed = (through, error)
            handedOver.removeAll()
            throw error
        }
    }

    /// The handed-over events that follow `projected` without a gap, in log order.
    private func contiguousRun() -> [LoggedEvent] {
        var run: [LoggedEvent] = []
        var next = projected + 1
        while let batch = handedOver.first(where: { ($0.first?.index ?? .max) <= next && ($0.last?.index ?? 0) >= next }) {
            run += batch.drop { $0.index < next }
            next = (batch.last?.index ?? next) + 1
        }
        return run
    }

    /// Records where the views' checkpoint is: usually ahead of what this remembered, behind it
    /// only when a rebuild swapped in a generation that has not caught up yet (then the events
    /// after it are read from the log, as for any gap).
    private func settle(at checkpoint: UInt64) {
        handedOver.removeAll { ($0.last?.index ?? 0) <= checkpoint }
        projected = checkpoint
        if let failure = failed, failure.through <= checkpoint { failed = nil }
    }
}
