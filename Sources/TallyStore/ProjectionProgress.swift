import Synchronization

/// How far one process's projector has taken the views, told to whoever waits for news: a
/// change feed sleeps until the views pass its cursor instead of asking SQLite four times a
/// second, so ten thousand idle feeds cost no work at all.
///
/// A hint, not the truth: the views' checkpoint is. The projector tells it after each commit;
/// a waiter that wakes reads the checkpoint, and a waiter that is not woken (the views moved
/// under another process) still wakes at its timeout.
public final class ProjectionProgress: Sendable {
    private struct State {
        var index: UInt64 = 0
        var waiters: [ObjectIdentifier: (after: UInt64, slot: WakeSlot)] = [:]
    }
    private let state = Mutex(State())

    public init() {}

    /// The views reached log index `index`: wakes every waiter for an index before it.
    public func advanced(to index: UInt64) {
        let ready = state.withLock { state -> [WakeSlot] in
            guard index > state.index else { return [] }
            state.index = index
            let ready = state.waiters.filter { $0.value.after < index }
            for id in ready.keys { state.waiters[id] = nil }
            return ready.values.map(\.slot)
        }
        for slot in ready { slot.wake() }
    }

    /// The last index this process's projector took the views to (0 before any); behind
    /// them when another process or projector moved them since.
    public var index: UInt64 { state.withLock { $0.index } }

    /// How many wait now (for tests).
    public var waiting: Int { state.withLock { $0.waiters.count } }

    /// Waits until this projector passed `cursor` (true), `timeout` passed (false), or the
    /// task is cancelled (false).
    public func wait(after cursor: UInt64, atMost timeout: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.wait(after: cursor)
                return !Task.isCancelled
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// Returns once the views passed `cursor`, or when the task is cancelled.
    private func wait(after cursor: UInt64) async {
        let slot = WakeSlot()
        let id = ObjectIdentifier(slot)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                guard slot.hold(continuation) else { return }  // cancelled already: resumed
                let passed = state.withLock { state -> Bool in
                    if state.index > cursor { return true }
                    // Registered only while the slot waits: a cancel that came between is not left behind.
                    if slot.isWaiting { state.waiters[id] = (cursor, slot) }
                    return false
                }
                if passed { slot.wake() }
            }
        } onCancel: {
            slot.wake()
            _ = state.withLock { $0.waiters.removeValue(forKey: id) }
        }
    }
}

/// One wait's continuation, resumed exactly once: by a wake before or after it is held.
private final class WakeSlot: Sendable {
    private enum Phase {
        case pending
        case waiting(CheckedContinuation<Void, Never>)
        case woken
    }
    private let phase = Mutex(Phase.pending)

    /// Holds `continuation` until `wake`; false (and resumed at once) if woken already.
    func hold(_ continuation: CheckedContinuation<Void, Never>) -> Bool {
        let woken = phase.withLock { phase -> Bool in
            if case .woken = phase { return true }
            phase = .waiting(continuation)
            return false
        }
        if woken { continuation.resume() }
        return !woken
    }

    var isWaiting: Bool {
        phase.withLock { phase in
            if case .waiting = phase { return true }
            return false
        }
    }

    func wake() {
        let continuation = phase.withLock { phase -> CheckedContinuation<Void, Never>? in
            defer { phase = .woken }
            if case .waiting(let continuation) = phase { return continuation }
            return nil
        }
        continuation?.resume()
    }
}
