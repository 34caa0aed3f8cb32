import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TallyCore
import TallyLog
import TallyStore
import TallySync

/// Talks to another replica's service: its vector, pulling what this replica lacks, pushing
/// what it lacks. Both directions stream, and received events are verified and appended in
/// batches as they arrive, so an interrupted sync keeps what arrived and resumes from there.
public struct ReplicaClient: Sendable {
    public let baseURL: String
    public let token: String

    public init(baseURL: String, token: String) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.token = token
    }

    func request(_ path: String, method: HTTPMethod) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        return request
    }

    static func check(_ response: HTTPClientResponse, _ what: String) async throws {
        guard response.status.code < 300 else {
            let body = try await response.body.collect(upTo: 1 << 16)
            throw SyncRejection(source: what, reason: "the peer answered \(response.status.code): \(String(buffer: body))")
        }
    }

    /// The peer's version vector.
    public func vector() async throws -> VersionVector {
        let response = try await HTTPClient.shared.execute(request("/v1/replication/vector", method: .GET), timeout: .seconds(30))
        try await Self.check(response, "GET \(baseURL)/v1/replication/vector")
        return try JSONDecoder().decode(VersionVector.self, from: Data(try await response.body.collect(upTo: 1 << 20).readableBytesView))
    }

    /// Streams the events the peer has and `mine` lacks into `receiver`.
    public func pull(mine: VersionVector, into receiver: inout StreamReceiver) async throws {
        var request = request("/v1/replication/pull", method: .POST)
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: mine.json))
        let response = try await HTTPClient.shared.execute(request, timeout: .hours(1))
        try await Self.check(response, "POST \(baseURL)/v1/replication/pull")
        do {
            for try await buffer in response.body { try receiver.feed(buffer.readableBytesView) }
            try receiver.finish()
        } catch {
            receiver.stop()  // keep what was verified before the break
            throw error
        }
    }

    /// Sends the events of `directory` that `theirs` lacks; returns the peer's report.
    public func push(from directory: DataDirectory, theirs: VersionVector) async throws -> (applied: Int, alreadyHeld: Int, sent: Int) {
        let sent = Counter()
        let stream = recordStream(from: directory, lacking: theirs, sent: sent)
        var request = request("/v1/replication/push", method: .POST)
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        request.body = .stream(stream, length: .unknown)
        let response = try await HTTPClient.shared.execute(request, timeout: .hours(1))
        try await Self.check(response, "POST \(baseURL)/v1/replication/push")
        let report = try JSONSerialization.jsonObject(with: Data(try await response.body.collect(upTo: 1 << 20).readableBytesView)) as? [String: Any] ?? [:]
        return (report["applied"] as? Int ?? 0, report["alreadyHeld"] as? Int ?? 0, sent.value)
    }
}

/// The records of `directory` that `vector` lacks, read on a thread of their own and handed
/// out as a stream of ~1 MiB buffers; the reader waits while the consumer is behind, so
/// memory stays bounded whatever the log's size.
func recordStream(from directory: DataDirectory, lacking vector: VersionVector, sent: Counter) -> AsyncThrowingStream<ByteBuffer, any Error> {
    let (stream, continuation) = AsyncThrowingStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingOldest(8))
    let producer = Thread {
        do {
            try EventRecords.missing(from: directory, for: vector) { chunk, count in
                sent.add(count)
                while true {
                    switch continuation.yield(ByteBuffer(bytes: chunk)) {
                    case .enqueued: return
                    case .dropped: Thread.sleep(forTimeInterval: 0.002)
                    case .terminated: throw CancellationError()
                    @unknown default: return
                    }
                }
            }
            continuation.finish()
        } catch {
            continuation.finish(throwing: error)
        }
    }
    producer.start()
    return stream
}

/// A thread-safe count.
final class Counter: @unchecked Sendable {
    // @unchecked: `count` is only touched under `lock`.
    private let lock = NSLock()
    private var count = 0
    func add(_ amount: Int) { lock.withLock { count += amount } }
    var value: Int { lock.withLock { count } }
}

/// What one sync with a peer did.
public struct SyncReport: Sendable {
    public var pulled: Int
    public var pushed: Int
    public var alreadyHeld: Int
    /// New conflicts journaled and category merges made by what was pulled.
    public var newConflicts: Int
    public var newMerges: Int
}

/// Pull, then push, with one peer.
public enum SyncRunner {
    public static func sync(writer: LogWriter, projector: Projector, directory: DataDirectory, peer: ReplicaClient,
                            maximumSkewMillis: UInt64 = 300_000, push: Bool = true) async throws -> SyncReport {
        let before = try await projector.database.read { db in
            (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM conflicts") ?? 0, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM category_merges") ?? 0)
        }
        var receiver = StreamReceiver(writer: writer, source: peer.baseURL, maximumSkewMillis: maximumSkewMillis)
        let mine = VersionVector(head: writer.head, excluding: directory.identity.localOnlyOrigin)
        do {
            try await peer.pull(mine: mine, into: &receiver)
        } catch {
            try projector.catchUp()
            throw error
        }
        try projector.catchUp(startingFrom: receiver.takeFolded())
        var pushed = 0
        var held = receiver.alreadyHeld
        if push {
            let theirs = try await peer.vector()
            if !theirs.covers(VersionVector(head: writer.head, excluding: directory.identity.localOnlyOrigin)) {
                let result = try await peer.push(from: directory, theirs: theirs)
                pushed = result.applied
                held += result.alreadyHeld
            }
        }
        let after = try await projector.database.read { db in
            (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM conflicts") ?? 0, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM category_merges") ?? 0)
        }
        return SyncReport(pulled: receiver.applied, pushed: pushed, alreadyHeld: held, newConflicts: after.0 - before.0, newMerges: after.1 - before.1)
    }
}
