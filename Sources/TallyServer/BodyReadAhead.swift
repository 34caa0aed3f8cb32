import Hummingbird
import NIOCore

/// A request body whose first bytes are read before it is handed on: a push reads up to
/// `limit` of its body before it takes the ledger's delivery turn (`ReplicationRoutes`), so a
/// client that drips its body holds only its own connection — not every other sync of the
/// ledger — unless it first sends more than `limit` of events the ledger verifies as they come.
/// An app's usual push fits whole.
struct BodyReadAhead: AsyncSequence {
    typealias Element = ByteBuffer
    /// The bytes read ahead, copied into one buffer: kept as the pieces they came in, a body
    /// sent a byte to a chunk held ~40 bytes of memory per byte (found by a hostile run).
    private let read: ByteBuffer
    /// The rest of the body, if it did not end within them.
    private let rest: RequestBody.AsyncIterator?

    /// Reads `body` until it ends or more than `limit` bytes have arrived.
    static func reading(_ body: RequestBody, upTo limit: Int) async throws -> BodyReadAhead {
        var iterator = body.makeAsyncIterator()
        var read = ByteBuffer()
        while read.readableBytes <= limit {
            guard var piece = try await iterator.next() else { return BodyReadAhead(read: read, rest: nil) }
            read.writeBuffer(&piece)
        }
        return BodyReadAhead(read: read, rest: iterator)
    }

    private init(read: ByteBuffer, rest: RequestBody.AsyncIterator?) { (self.read, self.rest) = (read, rest) }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(read: read.readableBytes > 0 ? read : nil, rest: rest) }

    struct AsyncIterator: AsyncIteratorProtocol {
        var read: ByteBuffer?
        var rest: RequestBody.AsyncIterator?

        mutating func next() async throws -> ByteBuffer? {
            if let piece = read {
                read = nil
                return piece
            }
            return try await rest?.next()
        }
    }
}
