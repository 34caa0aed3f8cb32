import Testing

@testable import TallyCluster

/// Blobs on their way to or from PostgreSQL take turns (`LeasedArchive.blobTransfers`).
@Suite struct BlobTurnTests {
    /// Found by review: a blob waited for its turn without a bound, on a blocking thread every
    /// ledger shares; it is refused after the wait's bound instead, and served once a turn frees.
    @Test func aBlobWaitsForItsTurnOnlySoLong() throws {
        for _ in 0..<4 { LeasedArchive.blobTransfers.wait() }
        #expect(throws: ClusterRefusal.self) { try LeasedArchive.takeBlobTurn(within: 1) }
        for _ in 0..<4 { LeasedArchive.blobTransfers.signal() }
        try LeasedArchive.takeBlobTurn(within: 5)
        LeasedArchive.blobTransfers.signal()
    }
}
