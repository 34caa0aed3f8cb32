import Foundation
import NIOCore
import TallyCore
import TallyLog
import TallySync

/// Another ledger open in the same process, as a transport: two replicas syncing without a
/// network (tests, an app's own scratch replica, a tool that copies one data directory into
/// another). It carries bytes like `ReplicaClient` does — the records the other ledger would
/// answer a pull with, and what it is pushed goes through its own `receive` — so the ledger
/// syncing with it verifies every event as it would a peer's.
public struct LedgerTransport: ReplicaTransport {
    /// The other ledger.
    public let other: Ledger
    public let label: String

    public init(_ other: Ledger, label: String = "in-process ledger") {
        (self.other, self.label) = (other, label)
    }

    public func vector() async throws -> VersionVector { other.vector }

    public func fetch(lacking mine: VersionVector, into receive: (ByteBuffer) throws -> Void) async throws {
        for try await piece in other.records(lacking: mine) { try receive(piece) }
    }

    public func send(_ records: AsyncThrowingStream<ByteBuffer, any Error>) async throws -> SendReport {
        let (applied, alreadyHeld) = try await other.receive(records, from: label)
        return SendReport(applied: applied, alreadyHeld: alreadyHeld)
    }

    public func fetchBlob(_ digest: String, into receive: (ByteBuffer) throws -> Void) async throws -> Bool {
        guard BlobStore.isDigest(digest), try other.blobs.size(of: digest) != nil else { return false }
        try receive(ByteBuffer(bytes: try Data(contentsOf: URL(fileURLWithPath: try other.blobs.file(of: digest)))))
        return true
    }

    public func missingBlobs(_ offered: [String]) async throws -> [String] {
        try offered.filter { try BlobStore.isDigest($0) && other.blobs.size(of: $0) == nil }
    }

    public func sendBlob(_ digest: String, bytes: ByteBuffer) async throws {
        let writer = try other.blobs.writer(limit: Ledger.maxReplicatedBlobBytes)
        defer { writer.abort() }
        try writer.write(bytes.readableBytesView)
        _ = try writer.finish(expecting: digest)
    }
}
