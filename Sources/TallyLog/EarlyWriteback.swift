import CTallyLZ4
import Foundation
import Synchronization

/// While a large file is being written, asks the kernel every `interval` seconds to start
/// writing its dirty pages to disk, without waiting for them: the disk works while the writer
/// computes, and the `fsync` that makes the file durable waits for the last part only. A hint:
/// durability still comes from that `fsync`, and failures here are ignored.
public final class EarlyWriteback: Sendable {
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let started: Bool
    /// Hints the kernel accepted (for tests: the call exists and takes these arguments).
    let acceptedHints = Atomic<Int>(0)

    /// Starts the hints for the file at `path` (none if it cannot be opened).
    public init(path: String, interval: Double = 0.2) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        started = fd >= 0
        guard started else { return }
        let thread = Thread { [self] in
            while wake.wait(timeout: .now() + interval) == .timedOut {
                if tally_start_writeback(fd) == 0 { acceptedHints.add(1, ordering: .relaxed) }
            }
            close(fd)
            done.signal()
        }
        thread.name = "tally-writeback"
        thread.start()
    }

    /// Stops the hints; returns once the helper thread has let go of the file. Call once.
    public func stop() {
        guard started else { return }
        wake.signal()
        done.wait()
    }
}
