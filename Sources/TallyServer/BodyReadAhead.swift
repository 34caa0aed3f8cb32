import Foundation
import Hummingbird
import NIOCore

/// A request body whose first bytes are read before it is handed on: a push reads up to
/// `limit` of its body before it takes the ledger's delivery turn (`ReplicationRoutes`), so a
/// client that drips its body holds only its own connection — not every other sync of the
/// ledger — unless it first sends more than `limit` of events the ledger verifies as they come.
/// An app's usual push fits whole.
///
/// The rest, read while the push holds the turn, must keep coming (`Pace`): in each `window`
/// spent waiting for it, at least `minimumRate` bytes a second of it — checked by a timer, so
/// a client that sends nothing is cut at the window's end too, and bytes sent early do not
/// buy a later silence. A body that falls short fails (408 `body_too_slow`; what was verified
/// by then is kept). Before, a client that sent more than `limit` and then a byte every few
/// seconds held every other sync of the ledger for the push's whole deadline (five minutes).
/// The time the ledger spends on what came (verifying, appending) is not counted.
struct BodyReadAhead: AsyncSequence {
    typealias Element = ByteBuffer
    /// The bytes read ahead, copied into one buffer: kept as the pieces they came in, a body
    /// sent a byte to a chunk held ~40 bytes of memory per byte (found by a hostile run).
    private let read: ByteBuffer
    /// The rest of the body, if it did not end within them.
    private let rest: Rest?
    private let pace: Pace

    /// How fast the rest must come.
    struct Pace: Sendable {
        var minimumRate: Double
        var window: Duration
    }

    /// Reads `body` until it ends or more than `limit` bytes have arrived.
    static func reading(_ body: RequestBody, upTo limit: Int, pace: Pace) async throws -> BodyReadAhead {
        var iterator = body.makeAsyncIterator()
        var read = ByteBuffer()
        while read.readableBytes <= limit {
            guard var piece = try await iterator.next() else { return BodyReadAhead(read: read, rest: nil, pace: pace) }
            read.writeBuffer(&piece)
        }
        return BodyReadAhead(read: read, rest: Rest(iterator), pace: pace)
    }

    private init(read: ByteBuffer, rest: Rest?, pace: Pace) { (self.read, self.rest, self.pace) = (read, rest, pace) }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(read: read.readableBytes > 0 ? read : nil, rest: rest, pace: pace) }

    /// The rest of the body, each piece waited for with a time limit. A piece not come in time
    /// is still waited for, by the next call (the body's own iterator is never cancelled while
    /// the body is read: cancelled, it would end the body there). One request's task reads it,
    /// one call at a time (`AsyncIterator.next` awaits each).
    final class Rest: @unchecked Sendable {
        private var iterator: RequestBody.AsyncIterator
        /// The piece asked for and not come yet.
        private var pending: Task<ByteBuffer?, any Error>?

        init(_ iterator: RequestBody.AsyncIterator) { self.iterator = iterator }

        /// The next piece, or the body's end (`.some(nil)`); nil if neither came within `limit`.
        func next(within limit: Duration) async throws -> ByteBuffer?? {
            let asked = pending ?? Task { try await self.iterator.next() }
            pending = asked
            let first = FirstOutcome()
            let outcome = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Result<ByteBuffer??, any Error>, Never>) in
                    first.wait(continuation)
                    // Awaiting a task's value cannot be cancelled: a task of its own waits for the
                    // piece (and ends when it comes), the timer beside it.
                    Task {
                        do { first.give(.success(.some(try await asked.value))) } catch { first.give(.failure(error)) }
                    }
                    first.timer = Task {
                        try? await Task.sleep(for: limit)
                        first.give(.success(nil))
                    }
                }
            } onCancel: {
                asked.cancel()
            }
            first.timer?.cancel()
            let piece = try outcome.get()
            if piece != nil { pending = nil }
            return piece
        }

        /// Whichever of the piece and the timer comes first, handed to the one waiting (who
        /// waits before either is started).
        private final class FirstOutcome: @unchecked Sendable {
            private let lock = NSLock()
            private var continuation: CheckedContinuation<Result<ByteBuffer??, any Error>, Never>?
            /// The timer, cancelled once the outcome is taken: set before the wait suspends and
            /// read after it resumes, by the task that waits.
            var timer: Task<Void, Never>?

            func wait(_ continuation: CheckedContinuation<Result<ByteBuffer??, any Error>, Never>) {
                lock.withLock { self.continuation = continuation }
            }

            func give(_ outcome: Result<ByteBuffer??, any Error>) {
                let waiting = lock.withLock {
                    defer { continuation = nil }
                    return continuation
                }
                waiting?.resume(returning: outcome)
            }
        }

        /// Stops waiting for the body (it is failed).
        func cancel() { pending?.cancel() }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var read: ByteBuffer?
        let rest: Rest?
        let pace: Pace
        /// How long the current window has been waited through, and what came in it.
        var waitedInWindow: Duration = .zero
        var bytesInWindow = 0

        mutating func next() async throws -> ByteBuffer? {
            if let piece = read {
                read = nil
                return piece
            }
            guard let rest else { return nil }
            while true {
                let asked = ContinuousClock.now
                let remaining = pace.window - waitedInWindow
                let piece = try await rest.next(within: remaining)
                waitedInWindow += piece == nil ? remaining : ContinuousClock.now - asked
                if let piece, let bytes = piece { bytesInWindow += bytes.readableBytes }
                if waitedInWindow >= pace.window {
                    guard Double(bytesInWindow) >= (pace.window / .seconds(1)) * pace.minimumRate else {
                        rest.cancel()
                        throw APIError(
                            .requestTimeout, "body_too_slow",
                            "the body came slower than \(Int(pace.minimumRate)) bytes a second while this push held the ledger's turn")
                    }
                    (waitedInWindow, bytesInWindow) = (.zero, 0)
                }
                if let piece { return piece }  // a piece, or the body's end
            }
        }
    }
}
