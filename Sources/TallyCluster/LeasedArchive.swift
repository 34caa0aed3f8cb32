import Dispatch
import Foundation
import NIOCore
import Synchronization
import TallyLog

/// A hosted ledger's archive on a cluster (`LedgerArchive`): each write of its log goes to
/// PostgreSQL (`ClusterArchive.archive`) under the lease this node holds, and the writer writes
/// it locally only once PostgreSQL has committed it; each attachment goes there before the
/// upload is answered (`ClusterArchive.storeBlob`), and a node that lacks one reads it there.
///
/// The writer and the blob store call it on blocking threads and must wait for PostgreSQL, so
/// this blocks the calling thread on a detached task: it must never be one of Swift's
/// cooperative threads (a ledger's writes run on `BlockingThreads`), or the wait could starve
/// the task it waits for.
public final class LeasedArchive: LedgerArchive {
    let archive: ClusterArchive
    /// The lease writes are archived under (renewing it keeps its epoch; a new one needs a new
    /// writer, opened after catching up).
    public let lease: ClusterLease

    public init(_ archive: ClusterArchive, lease: ClusterLease) { (self.archive, self.lease) = (archive, lease) }

    /// How long a write waits for PostgreSQL's answer. (A statement given up on may still
    /// commit later: the writer has stopped by then, and the next open catches up with it.)
    static let answerTimeoutSeconds = 10
    /// How long a blob's store or read waits (up to 25 MiB over the network).
    static let blobTimeoutSeconds = 60
    /// The largest blob archived: a `bytea` holds at most 1 GiB, and a blob is held in memory
    /// while it goes to PostgreSQL or comes back.
    public let maxBlobBytes = 256 << 20
    /// Blobs on their way to or from PostgreSQL at once, in this process: their connections are
    /// taken from the pool every ledger's writes archive through, and their bytes are in memory.
    static let blobTransfers = DispatchSemaphore(value: 4)
    /// How long a blob waits for its turn among `blobTransfers` before it is refused (503: the
    /// client tries again). The wait holds one of the process's blocking threads, which every
    /// ledger's imports, reads and sign-ins share: without a bound, uploads queued behind four
    /// slow transfers (PostgreSQL stalled) could take them all.
    static let blobTurnTimeoutSeconds = 10

    /// Takes a turn among `blobTransfers` (the caller signals it when done), waiting at most `seconds`.
    static func takeBlobTurn(within seconds: Int = blobTurnTimeoutSeconds) throws {
        guard blobTransfers.wait(timeout: .now() + .seconds(seconds)) == .success else {
            throw ClusterRefusal.invalid("other attachments are on their way to or from PostgreSQL; try again shortly")
        }
    }

    public func archive(_ appends: [SegmentAppend]) throws {
        let (archive, lease) = (archive, lease)
        try wait(Self.answerTimeoutSeconds) { try await archive.archive(appends, under: lease) }
    }

    public func archive(blob digest: String, file: String) throws {
        let (archive, lease) = (archive, lease)
        try Self.takeBlobTurn()
        defer { Self.blobTransfers.signal() }
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        guard data.count <= maxBlobBytes else { throw BlobError.tooLarge(limit: maxBlobBytes) }
        let bytes = ByteBuffer(bytes: data)
        try wait(Self.blobTimeoutSeconds) { try await archive.storeBlob(digest, bytes: bytes, under: lease) }
    }

    public func holds(blob digest: String) throws -> Bool {
        let (archive, ledger) = (archive, lease.ledger)
        return try wait(Self.answerTimeoutSeconds) { try await archive.holdsBlob(digest, of: ledger) }
    }

    public func held(among digests: [String]) throws -> Set<String> {
        let (archive, ledger) = (archive, lease.ledger)
        return try wait(Self.answerTimeoutSeconds) { try await archive.heldBlobs(digests, of: ledger) }
    }

    public func bytes(ofBlob digest: String) throws -> [UInt8]? {
        let (archive, ledger) = (archive, lease.ledger)
        try Self.takeBlobTurn()
        defer { Self.blobTransfers.signal() }
        return try wait(Self.blobTimeoutSeconds) { try await archive.blob(digest, of: ledger) }
    }

    public func blobs() throws -> [BlobInfo] {
        let (archive, ledger) = (archive, lease.ledger)
        return try wait(Self.answerTimeoutSeconds) { try await archive.blobs(of: ledger) }
    }

    public func totalBytes() throws -> Int {
        let (archive, ledger) = (archive, lease.ledger)
        return try wait(Self.answerTimeoutSeconds) { try await archive.blobBytes(of: ledger) }
    }

    public func remove(blob digest: String) throws {
        let (archive, lease) = (archive, lease)
        try wait(Self.answerTimeoutSeconds) { try await archive.removeBlob(digest, under: lease) }
    }

    /// Runs `body` on a detached task and blocks this thread for its outcome, at most `seconds`.
    /// An answer that never comes (a connection cut without a reset) is a failure: for a write,
    /// the writer stops, and a retry later finds it archived or not (`ClusterArchive.archive`).
    private func wait<Value: Sendable>(_ seconds: Int, _ body: @escaping @Sendable () async throws -> Value) throws -> Value {
        let outcome = Outcome<Value>()
        Task.detached {
            let result = await Result(catching: body)
            outcome.result.withLock { $0 = result }
            outcome.done.signal()
        }
        guard outcome.done.wait(timeout: .now() + .seconds(seconds)) == .success else {
            throw ClusterRefusal.invalid("PostgreSQL did not answer within \(seconds) s (ledger '\(lease.ledger)')")
        }
        guard let result = outcome.result.withLock({ $0 }) else { throw ClusterRefusal.invalid("PostgreSQL's answer was lost") }
        return try result.get()
    }

    /// What the detached task hands back to the waiting thread.
    private final class Outcome<Value: Sendable>: Sendable {
        let result = Mutex<Result<Value, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing body.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
