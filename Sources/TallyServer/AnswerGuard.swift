import NIOCore
import Synchronization

/// Watches one answer being written (a change feed, a pull, a download, a forwarded stream)
/// from beside it: closes its connection when a write has waited longer than `writeDeadline`
/// for the client to take it, or (a change feed) when `isCurrent` says its token was revoked.
/// The answer's own writer cannot notice either while it is blocked in a write to a client
/// that stopped reading, and Hummingbird's idle timeout does not run while an answer is written.
final class AnswerGuard: Sendable {
    let channel: any Channel
    let writeDeadline: Duration
    private let writeStarted = Mutex<ContinuousClock.Instant?>(nil)

    init(channel: any Channel, writeDeadline: Duration) {
        self.channel = channel
        self.writeDeadline = writeDeadline
    }

    /// The most of an answer handed over in one timed write (`writing(_:_:)`).
    static let piece = 64 << 10

    /// Writes `buffer` through `write` in pieces of at most `piece` bytes, each timed: the
    /// deadline is for a client that takes nothing, not for a slow one taking a large answer
    /// (a write waits until nearly all it was handed is taken, so a MiB handed over at once
    /// cut off a phone that took it at 30 KB/s — found by review).
    func writing(_ buffer: ByteBuffer, _ write: (ByteBuffer) async throws -> Void) async throws {
        var rest = buffer
        while rest.readableBytes > Self.piece, let part = rest.readSlice(length: Self.piece) {
            try await writing { try await write(part) }
        }
        try await writing { try await write(rest) }
    }

    /// Runs one write, timed.
    func writing(_ write: () async throws -> Void) async throws {
        writeStarted.withLock { $0 = .now }
        defer { writeStarted.withLock { $0 = nil } }
        try await write()
    }

    /// Checks twice a second until cancelled; closes the connection once it must.
    func watch(isCurrent: () -> Bool) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(500))
            if Task.isCancelled { return }
            let stalled = writeStarted.withLock { $0.map { ContinuousClock.now - $0 > writeDeadline } ?? false }
            if stalled || !isCurrent() {
                channel.close(promise: nil)
                return
            }
        }
    }
}
