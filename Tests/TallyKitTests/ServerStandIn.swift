import NIOCore
import TallyLedger
import TallySync

/// A ledger in the same process standing in for a server over HTTP (`LedgerTransport`), with
/// hooks a test uses to count or cut what goes through.
struct ServerStandIn: ReplicaTransport {
    let server: LedgerTransport
    /// Before each pull: a throw fails it as a cut connection would.
    var beforePull: @Sendable () throws -> Void = {}
    /// Before each blob sent.
    var beforeUpload: @Sendable () -> Void = {}

    /// A connection cut mid-transfer (retried as a server out of reach).
    struct ConnectionCut: Error {}

    var label: String { server.label }
    func vector() async throws -> VersionVector { try await server.vector() }
    func fetch(lacking mine: VersionVector, into receive: (ByteBuffer) throws -> Void) async throws {
        try beforePull()
        try await server.fetch(lacking: mine, into: receive)
    }
    func send(_ records: AsyncThrowingStream<ByteBuffer, any Error>) async throws -> SendReport { try await server.send(records) }
    func fetchBlob(_ digest: String, into receive: (ByteBuffer) throws -> Void) async throws -> Bool { try await server.fetchBlob(digest, into: receive) }
    func missingBlobs(_ offered: [String]) async throws -> [String] { try await server.missingBlobs(offered) }
    func sendBlob(_ digest: String, bytes: ByteBuffer) async throws {
        beforeUpload()
        try await server.sendBlob(digest, bytes: bytes)
    }
}
