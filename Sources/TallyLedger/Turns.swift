import Synchronization

/// Work that takes turns: at most `atOnce` runs at a time, the rest wait first come, first
/// served, without holding a thread; past `maxWaiting` waiting, a caller is refused at once.
/// A ledger's reads as of a point, a ledger's share of the `BlockingThreads` and sign-ins'
/// password checks each take turns.
public final class Turns: Sendable {
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())
    public let atOnce: Int
    public let maxWaiting: Int

    public init(atOnce: Int, maxWaiting: Int = .max) {
        (self.atOnce, self.maxWaiting) = (max(1, atOnce), max(0, maxWaiting))
    }

    /// Runs `work` in its turn, or throws `refusal` without running it when `maxWaiting`
    /// callers already wait.
    public func run<Result: Sendable>(refusal: @autoclosure () -> any Error, _ work: () async throws -> Result) async throws -> Result {
        guard await take() else { throw refusal() }
        defer { pass() }
        return try await work()
    }

    /// Waits for a turn and hands it over as a `Ticket`; nil (no turn taken) if too many wait
    /// already.
    public func ticket() async -> Ticket? { await take() ? Ticket(self) : nil }

    /// A turn held by an object, for one that lasts past the call that took it (until a
    /// response's body is written): given back by `leave()` or when the ticket is freed,
    /// whichever comes first — a body that is never written cannot keep it.
    public final class Ticket: Sendable {
        private let turns: Turns
        private let left = Atomic<Bool>(false)

        fileprivate init(_ turns: Turns) { self.turns = turns }

        public func leave() {
            if !left.exchange(true, ordering: .acquiringAndReleasing) { turns.pass() }
        }

        deinit { leave() }
    }

    /// Waits for a turn; false (no turn taken) if too many wait already.
    private func take() async -> Bool {
        enum Turn { case now, queued, refused }
        var turn = Turn.refused
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            turn = state.withLock { state in
                if state.running < atOnce {
                    state.running += 1
                    return .now
                }
                guard state.waiting.count < maxWaiting else { return .refused }
                state.waiting.append(continuation)
                return .queued
            }
            if turn != .queued { continuation.resume() }
        }
        return turn != .refused
    }

    /// Hands the turn to the next waiting caller, if any.
    fileprivate func pass() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }

    /// How many run now and how many wait (for tests and `/metrics`).
    public var counts: (running: Int, waiting: Int) { state.withLock { ($0.running, $0.waiting.count) } }
}
