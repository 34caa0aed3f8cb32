import Hummingbird
import NIOCore

/// A request body whose first bytes are read before it is handed on: a push reads up to
/// `limit` of its body before it takes the ledger's delivery turn (`ReplicationRoutes`), so a
/// client that drips its body holds only its own connection — not every other sync of the
/// ledger — unless it first sends more than `limit` of events the ledger verifies as they come.
/// An app's usual push fits whole.
///
/// The rest, read while the push holds the turn, must keep coming: after `grace` spent waiting
/// for it, at `minimumRate` bytes a second of the time waited, or the next piece that arrives
/// later than that fails the body (408 `body_too_slow`; what was verified by then is kept). A client that sent more than `limit` first and then a byte every few seconds held
/// every other sync of the ledger for the push's whole deadline (five minutes); now for the
/// grace and at most the server's idle timeout (a piece that never comes).
struct BodyReadAhead: AsyncSequence {
    typealias Element = ByteBuffer
    /// The bytes read ahead, copied into one buffer: kept as the pieces they came in, a body
    /// sent a byte to a chunk held ~40 bytes of memory per byte (found by a hostile run).
    private let read: ByteBuffer
    /// The rest of the body, if it did not end within them.
    private let rest: RequestBody.AsyncIterator?
    private let pace: Pace

    /// How fast the rest must come.
    struct Pace: Sendable {
        var minimumRate: Double
        var grace: Duration
    }

    /// Reads `body` until it ends or more than `limit` bytes have arrived.
    static func reading(_ body: RequestBody, upTo limit: Int, pace: Pace) async throws -> BodyReadAhead {
        var iterator = body.makeAsyncIterator()
        var read = ByteBuffer()
        while read.readableBytes <= limit {
            guard var piece = try await iterator.next() else { return BodyReadAhead(read: read, rest: nil, pace: pace) }
            read.writeBuffer(&piece)
        }
        return BodyReadAhead(read: read, rest: iterator, pace: pace)
    }

    private init(read: ByteBuffer, rest: RequestBody.AsyncIterator?, pace: Pace) { (self.read, self.rest, self.pace) = (read, rest, pace) }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(read: read.readableBytes > 0 ? read : nil, rest: rest, pace: pace) }

    struct AsyncIterator: AsyncIteratorProtocol {
        var read: ByteBuffer?
        var rest: RequestBody.AsyncIterator?
        let pace: Pace
        /// How long the rest has been waited for, and how much of it has come: the time the
        /// ledger spends on what came (verifying, appending) is not the client's.
        var restWaited: Duration = .zero
        var restBytes = 0

        mutating func next() async throws -> ByteBuffer? {
            if let piece = read {
                read = nil
                return piece
            }
            let asked = ContinuousClock.now
            guard let piece = try await rest?.next() else { return nil }
            restWaited += ContinuousClock.now - asked
            restBytes += piece.readableBytes
            let late = restWaited - pace.grace
            if late > .zero, Double(restBytes) < (late / .seconds(1)) * pace.minimumRate {
                throw APIError(
                    .requestTimeout, "body_too_slow",
                    "the body came slower than \(Int(pace.minimumRate)) bytes a second while this push held the ledger's turn")
            }
            return piece
        }
    }
}
