import TallyCore
import TallyLog

/// A way to exchange events with another replica: over HTTP with its service (`ReplicaClient`)
/// or as files in a folder (`BundleFolder`). `TallyLedger.Ledger.sync(with:)` runs the same
/// exchange over either — pull what this replica lacks, project, push what the other lacks —
/// and every event pulled passes `IncomingEvents`' checks whichever way it came.
public protocol ReplicaTransport: Sendable {
    /// Names the other side in messages and metrics (a peer's name or a folder's path).
    var label: String { get }
    /// What the other side holds (for a folder: what the replica that reads it said it holds,
    /// or nothing known).
    func vector() async throws -> VersionVector
    /// Verifies and appends to `writer` what the other side holds and the log lacks.
    func pull(into writer: LogWriter, maximumSkewMillis: UInt64) async throws -> PullReport
    /// Sends what `directory` holds and `theirs` lacks.
    func push(from directory: DataDirectory, theirs: VersionVector) async throws -> PushReport
    /// Fetches the blobs named in `wanted` that the other side holds into `store`, each checked
    /// against its digest before it is kept; returns how many arrived. (A folder's blobs come
    /// with its pull, checked with the bundle.)
    func fetchBlobs(_ wanted: [String], into store: BlobStore, limit: Int) async throws -> Int
    /// Sends the blobs of `offered` that the other side lacks; returns how many were sent.
    func sendBlobs(_ offered: [String], from store: BlobStore) async throws -> Int
}

extension ReplicaTransport {
    public func fetchBlobs(_ wanted: [String], into store: BlobStore, limit: Int) async throws -> Int { 0 }
    public func sendBlobs(_ offered: [String], from store: BlobStore) async throws -> Int { 0 }
}

/// What a pull appended.
public struct PullReport: Sendable {
    /// Events appended (durable).
    public var applied: Int
    /// Events skipped because the log held them already.
    public var alreadyHeld: Int
    /// The pulled events folded, when the log was empty before (so the first projection need
    /// not read the log back).
    public var folded: FoldedLog?

    public init(applied: Int, alreadyHeld: Int, folded: FoldedLog?) {
        (self.applied, self.alreadyHeld, self.folded) = (applied, alreadyHeld, folded)
    }
}

/// What a push sent and the other side reported.
public struct PushReport: Sendable {
    /// Events sent.
    public var sent: Int
    /// Events the other side appended (for a folder: the events written to it).
    public var applied: Int
    /// Events the other side already held.
    public var alreadyHeld: Int

    public init(sent: Int, applied: Int, alreadyHeld: Int) {
        (self.sent, self.applied, self.alreadyHeld) = (sent, applied, alreadyHeld)
    }
}
