import AsyncHTTPClient
import Foundation
import Synchronization
import NIOCore
import NIOHTTP1
import TallyCore
import TallyLog

/// Talks to another replica's service: its vector, pulling what this replica lacks, pushing
/// what it lacks. Both directions stream, and received events are verified and appended in
/// batches as they arrive, so an interrupted sync keeps what arrived and resumes from there.
public struct ReplicaClient: ReplicaTransport, CustomStringConvertible, CustomReflectable {
    /// The client every sync uses: it follows no redirect (a peer's answer must not send this
    /// replica, and its token, somewhere else), and gives up on an answer that sends nothing for
    /// `readTimeout` once the request is sent. A request's own deadline ends when the answer's
    /// head arrives: the rest is read by `body(of:upTo:by:_:)` and `pieces(of:by:_:)`, which
    /// hold it to that deadline (a peer that sends its head and then stalls, or drips a byte a
    /// second, once held a sync — and, in a server, every delivery behind it — for as long as
    /// it liked).
    static let http = HTTPClient(
        eventLoopGroupProvider: .singleton,
        configuration: HTTPClient.Configuration(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10), read: readTimeout)))

    /// How long an answer may send nothing before the request is given up: longer than a
    /// server lets one push hold its delivery turn (5 min), since a push waits for its turn
    /// before it is answered (a first version gave up after 60 s behind a slow phone's push).
    static let readTimeout = TimeAmount.minutes(10)

    /// The peer's service, e.g. `http://192.168.0.5:8080`.
    public let baseURL: String
    /// What the requests carry: a token of the peer's with the `replicate` scope, or a member's
    /// session (an app's replica syncing as the member who signed in).
    public let credential: Credential
    /// The peer's name, for messages and metrics.
    public let label: String

    /// Printed, dumped or logged, it shows which kind it is, never its secret.
    public enum Credential: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        case token(String)
        /// The session cookie's secret and the CSRF token every write echoes (`signIn`).
        case session(secret: String, csrf: String)

        public var description: String {
            switch self {
            case .token: "token(…)"
            case .session: "session(…)"
            }
        }
        public var debugDescription: String { description }
        public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .enum) }
    }

    /// Printed or dumped: the URL as it may be shown (no credentials in it) and the
    /// credential's kind.
    public var description: String { "ReplicaClient(\(Peer.displayURL(baseURL)), \(credential))" }
    public var customMirror: Mirror { Mirror(self, children: ["baseURL": Peer.displayURL(baseURL), "credential": credential, "label": label]) }

    public init(baseURL: String, token: String, label: String? = nil) {
        self.init(baseURL: baseURL, credential: .token(token), label: label)
    }

    public init(baseURL: String, credential: Credential, label: String? = nil) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.credential = credential
        self.label = label ?? self.baseURL
    }

    /// Where the peer's API is: `BASE/v1` for a server of one ledger, or the URL itself when it
    /// names a hosted ledger (`http://host/v1/ledgers/NAME`, whose routes are `…/replication/…`).
    var apiBase: String { Self.apiBase(of: baseURL) }

    static func apiBase(of baseURL: String) -> String {
        URLComponents(string: baseURL)?.path.hasPrefix("/v1/ledgers/") == true ? baseURL : baseURL + "/v1"
    }

    /// A request to `path` of the peer's API (`/replication/vector`).
    func request(_ path: String, method: HTTPMethod) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: apiBase + path)
        request.method = method
        switch credential {
        case .token(let token): request.headers.add(name: "Authorization", value: "Bearer \(token)")
        case .session(let secret, let csrf):
            request.headers.add(name: "Cookie", value: "tally_session=\(secret)")
            request.headers.add(name: "X-CSRF-Token", value: csrf)
        }
        return request
    }

    /// Signs in to the service at `baseURL` as a member of its household (`POST …/session`):
    /// the session's secret (its cookie) and CSRF token, for `Credential.session`. A refused
    /// name or password throws a `SyncRejection` with status 401; too many tries, 429.
    public static func signIn(baseURL: String, name: String, password: String) async throws -> Credential {
        let base = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        var request = HTTPClientRequest(url: apiBase(of: base) + "/session")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: JSONText.object([("name", .string(name)), ("password", .string(password))]).serialized))
        let deadline = NIODeadline.now() + .seconds(30)
        let response = try await http.execute(request, deadline: deadline)
        try await check(response, "\(Peer.displayURL(base)): POST /session")
        // The server's words are checked before they go into headers of later requests.
        func token(_ text: String?) -> String? {
            let allowed = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_".utf8)
            guard let text, (1...256).contains(text.utf8.count), text.utf8.allSatisfy(allowed.contains) else { return nil }
            return text
        }
        let cookie = response.headers["Set-Cookie"].lazy.compactMap { header -> String? in
            guard header.hasPrefix("tally_session=") else { return nil }
            return String(header.dropFirst("tally_session=".count).prefix { $0 != ";" })
        }.first
        let body =
            try JSONSerialization.jsonObject(with: Data(try await Self.body(of: response, upTo: 1 << 16, by: deadline, "POST /session").readableBytesView))
            as? [String: Any]
        guard let secret = token(cookie), let csrf = token(body?["csrf"] as? String) else {
            throw SyncRejection(source: Peer.displayURL(base), reason: "the sign-in did not answer with a session")
        }
        return .session(secret: secret, csrf: csrf)
    }

    /// Refuses a failed answer, naming its status and, if the body is Tally's JSON error, its
    /// code — never the body itself (a peer's text must not reach our callers or logs).
    static func check(_ response: HTTPClientResponse, _ what: String) async throws {
        guard response.status.code < 300 else {
            let body = try? await body(of: response, upTo: 1 << 16, by: .now() + .seconds(30), what)
            let object = body.flatMap { try? JSONSerialization.jsonObject(with: Data($0.readableBytesView)) as? [String: Any] }
            let error = object?["error"] as? [String: Any]
            let code = error?["code"] as? String
            let shown = code.flatMap { $0.count <= 40 && $0.allSatisfy({ $0.isASCII && ($0.isLetter || $0 == "_") }) ? " (\($0))" : nil } ?? ""
            // A peer that holds another chain of an origin this replica sent names it (a copy of this replica, perhaps).
            let forked = code == "forked_chain" ? (error?["origin"] as? String).flatMap { ReplicaID(string: $0) } : nil
            throw SyncRejection(
                source: what, reason: "the peer answered \(response.status.code)\(shown)", httpStatus: Int(response.status.code), forkedOrigin: forked)
        }
    }

    /// An answer's body whole, at most `limit` bytes, read by `deadline` (else a `SyncRejection`
    /// naming `what`).
    static func body(of response: HTTPClientResponse, upTo limit: Int, by deadline: NIODeadline, _ what: String) async throws -> ByteBuffer {
        var collected = ByteBuffer()
        for try await piece in pieces(of: response, by: deadline, what) {
            guard collected.readableBytes + piece.readableBytes <= limit else {
                throw SyncRejection(source: what, reason: "the peer's answer is longer than \(limit) bytes")
            }
            collected.writeImmutableBuffer(piece)
        }
        return collected
    }

    /// An answer's body as it arrives, refused (a `SyncRejection` naming `what`) once `deadline`
    /// has passed — checked as each piece arrives; a peer that sends nothing at all is given up
    /// on after `readTimeout`.
    static func pieces(of response: HTTPClientResponse, by deadline: NIODeadline, _ what: String) -> some AsyncSequence<ByteBuffer, any Error> {
        response.body.map { piece in
            guard NIODeadline.now() < deadline else { throw SyncRejection(source: what, reason: "the peer's answer did not end in time") }
            return piece
        }
    }

    /// What went wrong talking to a peer, in a few words and without the peer's own text (a
    /// decoding error quotes what the peer sent — a million-character origin once came back
    /// whole); nil for an error that is not the exchange's (this replica's own: a full disk).
    public static func failureInWords(_ error: any Error) -> String? {
        switch error {
        case let error as HTTPClientError where error == .readTimeout:
            "it stopped answering (nothing for \(readTimeout.nanoseconds / 1_000_000_000) s)"
        case let error as HTTPClientError where error == .deadlineExceeded: "it did not answer in time"
        case let error as HTTPClientError where error == .remoteConnectionClosed: "it closed the connection before answering"
        case let error as HTTPClientError where error == .connectTimeout: "it could not be reached (the connection timed out)"
        case is IOError, is ChannelError: "it could not be reached"
        case is NIOTooManyBytesError: "its answer was longer than a replica's may be"
        case is DecodingError, is HTTPParserError: "its answer was not what a Tally replica sends"
        case is HTTPClientError: "it could not be reached, or did not answer as a Tally replica"
        default: nil
        }
    }

    /// The peer's version vector.
    public func vector() async throws -> VersionVector {
        let deadline = NIODeadline.now() + .seconds(30)
        let response = try await Self.http.execute(request("/replication/vector", method: .GET), deadline: deadline)
        try await Self.check(response, "\(label): GET /replication/vector")
        let body = try await Self.body(of: response, upTo: 1 << 20, by: deadline, "\(label): GET /replication/vector")
        return try JSONDecoder().decode(VersionVector.self, from: Data(body.readableBytesView))
    }

    /// Hands `receive` the records the peer holds and `mine` lacks, as they arrive.
    public func fetch(lacking mine: VersionVector, into receive: (ByteBuffer) throws -> Void) async throws {
        var request = request("/replication/pull", method: .POST)
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: mine.json))
        let deadline = NIODeadline.now() + .hours(1)
        let response = try await Self.http.execute(request, deadline: deadline)
        try await Self.check(response, "\(label): POST /replication/pull")
        for try await buffer in Self.pieces(of: response, by: deadline, "\(label): POST /replication/pull") { try receive(buffer) }
    }

    /// Asks the service to sync with a peer itself (`POST /replication/sync`): what
    /// `tally sync` does when a running server holds the writer lock. `body` names the peer
    /// (`{"peer": name}` or `{"url", "token"}`); returns the service's JSON report as text.
    public func requestSync(_ body: String) async throws -> String {
        var request = request("/replication/sync", method: .POST)
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        let deadline = NIODeadline.now() + .hours(1)
        let response = try await Self.http.execute(request, deadline: deadline)
        let text = String(buffer: try await Self.body(of: response, upTo: 1 << 20, by: deadline, "\(label): POST /replication/sync"))
        guard response.status.code == 200 else {
            // The server's own words (what it kept is its to say), never "nothing was applied".
            let error = (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?["error"] as? [String: Any]
            throw ServerSyncFailure(status: Int(response.status.code), message: (error?["message"] as? String) ?? String(text.prefix(2_000)))
        }
        return text
    }

    /// The running server's own sync failed (`requestSync`): its status and its words.
    public struct ServerSyncFailure: Error, Sendable, CustomStringConvertible {
        public let status: Int
        public let message: String
        public var description: String { "the running server's sync failed (\(status)): \(message)" }
    }

    /// Sends `records` to the peer; returns its report.
    public func send(_ records: AsyncThrowingStream<ByteBuffer, any Error>) async throws -> SendReport {
        var request = request("/replication/push", method: .POST)
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        request.body = .stream(records, length: .unknown)
        let deadline = NIODeadline.now() + .hours(1)
        let response = try await Self.http.execute(request, deadline: deadline)
        try await Self.check(response, "\(label): POST /replication/push")
        let answer = Data(try await Self.body(of: response, upTo: 1 << 20, by: deadline, "\(label): POST /replication/push").readableBytesView)
        return try SendReport(peerAnswer: answer, from: "\(label): POST /replication/push")
    }
}

/// The records of `directory` that `vector` lacks, read on a thread of their own and handed
/// out as a stream of ~1 MiB buffers; the reader waits while the consumer is behind, so
/// memory stays bounded whatever the log's size.
///
/// An origin left out for its run without a signed head (`EventRecords.missing`) is handed to
/// `leftOut` once every other record went, and the stream ends as usual: the run is not this
/// replica's to sign, so it fails nothing (a push's sender says it in its report, a pull's
/// server in its log).
public func recordStream(
    from directory: DataDirectory, lacking vector: VersionVector, sent: Counter = Counter(), limits: EventRecords.UnsignedLimits = EventRecords.streamLimits,
    leftOut: @escaping @Sendable (LeftOutRun) -> Void = { _ in }
) -> AsyncThrowingStream<ByteBuffer, any Error> {
    let (stream, continuation) = AsyncThrowingStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingOldest(8))
    let producer = Thread {
        do {
            let run = try EventRecords.missing(from: directory, for: vector, limits: limits) { chunk, count in
                sent.add(count)
                // While the consumer is behind: waits a little longer each time (2 ms, up to a
                // tenth of a second), the buffer made once — a client that stopped reading cost
                // a copy of a MiB every 2 ms until its connection was closed.
                let buffer = ByteBuffer(bytes: chunk)
                var pause = 0.002
                while true {
                    switch continuation.yield(buffer) {
                    case .enqueued: return
                    case .dropped:
                        Thread.sleep(forTimeInterval: pause)
                        pause = min(pause * 2, 0.1)
                    case .terminated: throw CancellationError()
                    @unknown default: return
                    }
                }
            }
            if let run { leftOut(run) }
            continuation.finish()
        } catch {
            continuation.finish(throwing: error)
        }
    }
    producer.start()
    return stream
}

/// The first run a stream left out (`recordStream`'s `leftOut`), kept for the sync's report.
public final class LeftOutRuns: Sendable {
    private let kept = Mutex<LeftOutRun?>(nil)
    public init() {}
    public func note(_ run: LeftOutRun) { kept.withLock { $0 = $0 ?? run } }
    public var first: LeftOutRun? { kept.withLock { $0 } }
}

/// A thread-safe count.
public final class Counter: @unchecked Sendable {
    // @unchecked: `count` is only touched under `lock`.
    private let lock = NSLock()
    private var count = 0
    public init() {}
    public func add(_ amount: Int) { lock.withLock { count += amount } }
    public var value: Int { lock.withLock { count } }
}

/// Blobs over HTTP (`/v1/replication/blobs/…`, scope `replicate`).
extension ReplicaClient {
    /// The service's thumbnail of an image attachment (`GET …/attachments/DIGEST/thumbnail`,
    /// scope `read`), at most `limit` bytes; nil when it holds no such attachment.
    public func fetchThumbnail(_ digest: String, size: Int, limit: Int = 4 << 20) async throws -> [UInt8]? {
        guard BlobStore.isDigest(digest), AttachmentType.thumbnailSizes.contains(size) else { return nil }
        let deadline = NIODeadline.now() + .seconds(60)
        let response = try await Self.http.execute(request("/attachments/\(digest)/thumbnail?size=\(size)", method: .GET), deadline: deadline)
        if response.status.code == 404 { return nil }
        try await Self.check(response, "\(label): GET /attachments/\(digest)/thumbnail")
        return Array(try await Self.body(of: response, upTo: limit, by: deadline, "\(label): GET /attachments/\(digest)/thumbnail").readableBytesView)
    }

    public func fetchBlob(_ digest: String, into receive: (ByteBuffer) throws -> Void) async throws -> Bool {
        guard BlobStore.isDigest(digest) else { return false }
        let deadline = NIODeadline.now() + .minutes(10)
        let response = try await Self.http.execute(request("/replication/blobs/\(digest)", method: .GET), deadline: deadline)
        if response.status.code == 404 { return false }  // the peer lacks it too
        try await Self.check(response, "\(label): GET /replication/blobs/\(digest)")
        for try await piece in Self.pieces(of: response, by: deadline, "\(label): GET /replication/blobs/\(digest)") { try receive(piece) }
        return true
    }

    public func missingBlobs(_ offered: [String]) async throws -> [String] {
        guard !offered.isEmpty else { return [] }
        var ask = request("/replication/blobs/missing", method: .POST)
        ask.headers.add(name: "Content-Type", value: "application/json")
        ask.body = .bytes(ByteBuffer(string: JSONText.object([("digests", .array(offered.map { .string($0) }))]).serialized))
        let deadline = NIODeadline.now() + .seconds(60)
        let response = try await Self.http.execute(ask, deadline: deadline)
        try await Self.check(response, "\(label): POST /replication/blobs/missing")
        let body = try await Self.body(of: response, upTo: 8 << 20, by: deadline, "\(label): POST /replication/blobs/missing")
        let answer = try JSONDecoder().decode([String: [String]].self, from: Data(body.readableBytesView))
        return answer["missing"] ?? []
    }

    public func sendBlob(_ digest: String, bytes: ByteBuffer) async throws {
        guard BlobStore.isDigest(digest) else { return }
        var put = request("/replication/blobs/\(digest)", method: .PUT)
        put.headers.add(name: "Content-Type", value: "application/octet-stream")
        put.body = .bytes(bytes)
        let stored = try await Self.http.execute(put, timeout: .minutes(10))
        try await Self.check(stored, "\(label): PUT /replication/blobs/\(digest)")
    }
}
