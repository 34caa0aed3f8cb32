import Foundation
import NIOCore
import TallyCore

/// A way to move bytes between this replica and another one: over HTTP with its service
/// (`ReplicaClient`), or in-process in tests. A transport only carries bytes — event records
/// (`EventRecords`) and blobs. It is never handed the log or the blob store: whatever it
/// fetches goes to a closure of the caller's, which is `TallyLedger.Ledger.sync(with:)`, and
/// that feeds every byte to `StreamReceiver` (`IncomingEvents`' checks) and every blob to a
/// `BlobWriter` that checks its digest. A transport cannot skip the verifier, because it has
/// nothing to append with.
///
/// A folder of segment files (`tally segments export`/`import`) is not a transport: a bundle
/// is verified and applied whole, by `SegmentBundle`, through `Ledger.importBundle(from:)`.
public protocol ReplicaTransport: Sendable {
    /// Names the other side in messages and metrics (a peer's name, or a URL).
    var label: String { get }
    /// What the other side holds.
    func vector() async throws -> VersionVector
    /// Hands `receive` the event records the other side holds and `mine` lacks, piece by piece
    /// as they arrive.
    func fetch(lacking mine: VersionVector, into receive: (ByteBuffer) throws -> Void) async throws
    /// Sends event records (what the other side lacks); returns what the other side reported.
    func send(_ records: AsyncThrowingStream<ByteBuffer, any Error>) async throws -> SendReport
    /// Hands `receive` the bytes of the blob named `digest`, piece by piece; false, having
    /// handed over nothing, when the other side does not hold it.
    func fetchBlob(_ digest: String, into receive: (ByteBuffer) throws -> Void) async throws -> Bool
    /// The blobs of `offered` the other side lacks.
    func missingBlobs(_ offered: [String]) async throws -> [String]
    /// Sends the bytes of the blob named `digest`.
    func sendBlob(_ digest: String, bytes: ByteBuffer) async throws
}

/// What the other side reported about records it was sent.
public struct SendReport: Sendable, Equatable {
    /// Events it appended.
    public var applied: Int
    /// Events it held already.
    public var alreadyHeld: Int

    public init(applied: Int, alreadyHeld: Int) {
        (self.applied, self.alreadyHeld) = (applied, alreadyHeld)
    }

    /// The most events one report may count: far more than any push, and small enough that
    /// a caller adding up reports cannot overflow.
    static let maxCount = 1 << 48

    /// A peer's answer to a push, `{"applied": N, "alreadyHeld": M}`: refused unless both are
    /// whole numbers from 0 to `maxCount` (the caller adds them up). The answer itself is not
    /// repeated in the error: it is the peer's text.
    public init(peerAnswer json: Data, from source: String) throws {
        struct Answer: Decodable {
            let applied: Int
            let alreadyHeld: Int
        }
        guard let answer = try? JSONDecoder().decode(Answer.self, from: json),
            (0...Self.maxCount).contains(answer.applied), (0...Self.maxCount).contains(answer.alreadyHeld)
        else {
            throw SyncRejection(
                source: source, reason: "the peer's answer to a push does not count what it applied and held (two whole numbers, 0 or more)")
        }
        self.init(applied: answer.applied, alreadyHeld: answer.alreadyHeld)
    }
}
