import Synchronization

/// One delivery of events from outside at a time (a pull, a push, a bundle), in arrival order,
/// without holding a thread while one waits. A delivery verifies against the log's head as it
/// stood when it began; two at once from the same peer (its push landing during our pull)
/// would both verify the same events, and the second to append would find them there already.
/// Taking turns makes the second start from what the first appended, so it counts them as
/// already held.
final class DeliveryTurn: Sendable {
    private struct State {
        var busy = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    /// Runs `delivery` once every delivery that asked before it has finished.
    func run<T>(_ delivery: () async throws -> T) async throws -> T {
        await take()
        defer { give() }
        return try await delivery()
    }

    private func take() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let mine = state.withLock { state -> Bool in
                guard state.busy else {
                    state.busy = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if mine { continuation.resume() }
        }
    }

    /// Hands the turn to the next in line, or frees it.
    private func give() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.busy = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
