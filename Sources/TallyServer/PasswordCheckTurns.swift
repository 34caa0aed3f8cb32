import Synchronization

/// Sign-ins take turns at their password's slow check (bcrypt, ~0.25 s of a core at cost 12):
/// at most `atOnce` run in the process, the rest wait for a turn without holding a thread, and
/// past `maxWaiting` a sign-in is refused at once (503, `Retry-After`). Found by review: a
/// member who knows their own password (a success clears the throttle's count) could sign in
/// in a loop from a few connections and keep both cores hashing, stopping every other
/// household; now such a loop costs at most one core and delays only sign-ins.
final class PasswordCheckTurns: Sendable {
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())
    let atOnce: Int
    let maxWaiting: Int

    /// The process's turns: one check at a time, so one core stays for everything else.
    static let shared = PasswordCheckTurns(atOnce: 1, maxWaiting: 64)

    init(atOnce: Int, maxWaiting: Int) {
        (self.atOnce, self.maxWaiting) = (atOnce, maxWaiting)
    }

    /// Runs `check` in its turn; throws `APIError` 503 if too many already wait.
    func run<Result: Sendable>(_ check: () async throws -> Result) async throws -> Result {
        try await take()
        defer { pass() }
        return try await check()
    }

    /// Waits for a turn (first come, first served).
    private func take() async throws {
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
        guard turn != .refused else {
            var error = APIError(.serviceUnavailable, "busy", "too many sign-ins wait for their password's check; try again in a few seconds")
            error.retryAfter = 5
            throw error
        }
    }

    /// Hands the turn to the next waiting check, if any.
    private func pass() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
