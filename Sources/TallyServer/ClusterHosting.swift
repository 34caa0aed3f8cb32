import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import Synchronization
import TallyCluster
import TallyLedger
import TallyLog

/// A hosted server's part in a cluster of nodes on one PostgreSQL (`tally serve --ledgers DIR
/// --cluster URL`, issue 32). Every node can answer for every ledger the cluster registers:
///
/// - a ledger no node holds is **taken** here (`take`): its folder's files written as the
///   cluster holds them, its log caught up with the archive (`ClusterCatchUp`), then its lease
///   taken — PostgreSQL refuses the lease to a node whose log does not end where the archive
///   does — and it opens with every write archived under that lease (`LeasedArchive`);
/// - a ledger another node holds is **forwarded** to it (`forward`), request and response
///   streamed as they are (a change feed too): one node serves each ledger's reads and
///   writes, so nobody reads a stale copy;
/// - while open here, its lease is **kept** (`keep`): renewed every third of its length, with
///   the folder's changed files (tokens, members, sessions…) stored beside it. A node that
///   could not renew in time stops serving the ledger when its lease runs out by its own clock
///   (`LeaseValidity`), before another node can take it; a late write is refused by
///   PostgreSQL anyway (the epoch), so a node paused past its lease cannot write.
public final class ClusterHosting: Sendable {
    public let archive: ClusterArchive
    private let advertised: Mutex<String>
    /// Where this node answers requests other nodes forward (`http://HOST:PORT`).
    public var url: String { advertised.withLock { $0 } }
    /// How long a lease lasts unrenewed: the longest a ledger waits for a new owner after
    /// its node died.
    public let leaseDuration: Duration
    /// How long a forwarded request's body may take to arrive (the served node's body timeout).
    let bodyTimeout: Duration
    let logger: Logger
    private let catchUp: ClusterCatchUp
    /// Every lease kept here, renewed together (`keep`).
    private let renewals: LeaseRenewals
    /// Where this node's renewal ticks count from (`nextRenewal`).
    private let ticksFrom = ContinuousClock.now
    /// Ledgers another node was found to serve, and where, until when: a request for one is
    /// forwarded without asking PostgreSQL again (`rememberedFor`), until that node answers
    /// that it does not serve it (503) or does not answer.
    private let servedElsewhere = Mutex<[LedgerName: (url: String, until: ContinuousClock.Instant)]>([:])

    /// The header a forwarded request carries (the node that forwarded it): a node never
    /// forwards such a request again, so two nodes that disagree for a moment cannot bounce
    /// it between them.
    static let forwardedBy = HTTPField.Name("Tally-Forwarded-By")!
    /// The cluster's forwarding key (`ForwardedClient`), once read from PostgreSQL.
    private let knownForwardingKey = Mutex<[UInt8]?>(nil)

    public init(archive: ClusterArchive, url: String, leaseDuration: Duration = .seconds(6), bodyTimeout: Duration = .seconds(30), logger: Logger) {
        (self.archive, self.leaseDuration, self.bodyTimeout, self.logger) = (archive, leaseDuration, bodyTimeout, logger)
        advertised = Mutex(url)
        catchUp = ClusterCatchUp(archive: archive) { work in try await BlockingThreads.run(work) }
        renewals = LeaseRenewals(archive: archive, duration: leaseDuration, limit: Self.renewEvery(of: leaseDuration))
    }

    /// The cluster's forwarding key, read from PostgreSQL the first time it can be (nil until then).
    func forwardingKey() async -> SymmetricKey? {
        if let known = knownForwardingKey.withLock({ $0 }) { return SymmetricKey(data: known) }
        let archive = archive
        guard let bytes = try? await answered("the forwarding key", within: Self.answerLimit, { try await archive.forwardingKey() }) else { return nil }
        knownForwardingKey.withLock { $0 = bytes }
        return SymmetricKey(data: bytes)
    }

    /// Where another node was lately found to serve `name`, if it was.
    func knownServer(of name: LedgerName) -> String? {
        servedElsewhere.withLock { known in
            guard let entry = known[name] else { return nil }
            guard ContinuousClock.now < entry.until else {
                known[name] = nil
                return nil
            }
            return entry.url
        }
    }

    /// Remembers (or, with nil, forgets) where another node serves `name`.
    func remember(_ name: LedgerName, servedAt url: String?) {
        servedElsewhere.withLock { known in
            if let url { known[name] = (url, .now + Self.rememberedFor) } else { known[name] = nil }
        }
    }

    /// How long where another node serves a ledger is remembered at most. Being wrong costs
    /// one answer: a node asked to serve a ledger it does not hold takes the lease when nobody
    /// holds it, or answers 503 (the ledger moving), and the forwarder then forgets it (any 503
    /// does: the next request asks PostgreSQL, as a request for an unknown ledger does).
    /// Remembered for a third of a lease instead, the nodes asked PostgreSQL 300–770 times a
    /// second under `scripts/bench --quick cluster`'s ~1,000 writes a second; now next to none.
    static let rememberedFor: Duration = .seconds(60)

    /// Says where this node answers from now on (once it knows the port it was given).
    public func advertise(_ url: String) { advertised.withLock { $0 = url } }

    /// How often a kept lease is renewed.
    var renewEvery: Duration { Self.renewEvery(of: leaseDuration) }

    /// A third of a lease: renewed that often, it outlives a renewal that fails.
    static func renewEvery(of leaseDuration: Duration) -> Duration { leaseDuration / 3 }

    /// The next of this node's renewal ticks after `now`: every `renewEvery`, at the same
    /// instants for every lease kept here, so that their renewals go to PostgreSQL together
    /// (`LeaseRenewals`). A lease just taken waits at most `renewEvery` for its first.
    func nextRenewal(after now: ContinuousClock.Instant = .now) -> ContinuousClock.Instant {
        let ticksPassed = max(0, Int64(((now - ticksFrom) / renewEvery).rounded(.down)))
        return ticksFrom + renewEvery * (ticksPassed + 1)
    }

    /// Brings the ledger `name` here, into `folder`, and takes its lease. Throws
    /// `LedgerServedElsewhere` when another node holds it, a 404 when the cluster registers
    /// no such ledger, a 503 when PostgreSQL cannot be reached.
    func take(_ name: LedgerName, folder: String) async throws -> (lease: ClusterLease, validity: LeaseValidity, files: StoredFiles) {
        do {
            for _ in 0..<3 {
                let archive = archive
                if let serving = try await answered("who serves '\(name)'", within: Self.answerLimit, { try await archive.servingNode(of: name.text) }),
                    serving.node != archive.node
                {
                    throw LedgerServedElsewhere(node: serving.node, url: serving.url)
                }
                guard let files = try await answered("the files of '\(name)'", within: Self.answerLimit, { try await archive.files(of: name.text) }) else {
                    throw APIError(.notFound, "not_found", "no ledger named '\(name)'")
                }
                try await BlockingThreads.run { try LedgerFiles.write(files, folder: folder) }
                let report: ClusterCatchUp.Report
                do {
                    report = try await catchUp.catchUp(name.text, logDirectory: folder + "/log")
                } catch let diverged as ClusterCatchUpError {
                    // This node's copy is a cache, and it holds what was never acknowledged.
                    let aside = try await BlockingThreads.run { try Self.moveAside(folder) }
                    logger.warning("moved a ledger's diverged copy aside", metadata: ["ledger": "\(name)", "to": "\(aside)", "why": "\(diverged)"])
                    continue
                }
                if report.appends > 0 {
                    logger.info(
                        "caught a ledger up from the cluster", metadata: ["ledger": "\(name)", "appends": "\(report.appends)", "bytes": "\(report.bytes)"])
                }
                let asked = ContinuousClock.now
                do {
                    let (end, duration) = (report.end, leaseDuration)
                    let lease = try await answered("a lease of '\(name)'", within: Self.answerLimit) {
                        try await archive.takeLease(name.text, localEnd: end, for: duration)
                    }
                    // Read again under the lease: the former owner may have stored a sign-in since
                    // they were first read (its lease ran out but nobody had taken it yet).
                    let current = try await answered("the files of '\(name)'", within: Self.answerLimit) { try await archive.files(of: name.text) }
                    try await BlockingThreads.run { try LedgerFiles.write(current ?? files, folder: folder) }
                    // The operator's edits queued for it, made before it is served.
                    let stored = StoredFiles(lease: lease, folder: folder)
                    let edits = try await answered("the edits of '\(name)'", within: Self.answerLimit) { try await archive.pendingEdits(of: name.text) }
                    if !edits.isEmpty {
                        try await answered("the edits of '\(name)'", within: Self.answerLimit) { try await stored.store(in: archive, applying: edits) }
                    }
                    return (lease, LeaseValidity(until: asked + leaseDuration - Self.margin), stored)
                } catch ClusterRefusal.leaseHeld {
                    continue  // taken meanwhile: forwarded next time round
                } catch ClusterRefusal.notCaughtUp {
                    continue  // archived to meanwhile, by a node whose lease just ran out
                }
            }
            throw APIError(.serviceUnavailable, "ledger_unavailable", "ledger '\(name)' is changing hands; try again shortly")
        } catch let error as APIError {
            throw error
        } catch let elsewhere as LedgerServedElsewhere {
            throw elsewhere
        } catch {
            logger.error("could not take a ledger", metadata: ["ledger": "\(name)", "error": "\(error)"])
            var unavailable = APIError(
                .serviceUnavailable, "cluster_unavailable", "ledger '\(name)' cannot be served now: the cluster's database does not answer")
            unavailable.retryAfter = 1
            throw unavailable
        }
    }

    /// How long one call on PostgreSQL may take before a request is answered 503 instead.
    static let answerLimit: Duration = .seconds(5)

    /// A lease is given up by this node's clock this long before PostgreSQL's: a renewal's
    /// time on the way there counts against it.
    static let margin: Duration = .seconds(1)

    /// Moves a ledger folder aside, beside the ledgers (`.discarded/NAME.SECONDS`), and
    /// returns where.
    static func moveAside(_ folder: String) throws -> String {
        let root = (folder as NSString).deletingLastPathComponent + "/.discarded"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var seconds = Int(Date().timeIntervalSince1970)
        let name = (folder as NSString).lastPathComponent
        while FileManager.default.fileExists(atPath: "\(root)/\(name).\(seconds)") { seconds += 1 }
        try FileManager.default.moveItem(atPath: folder, toPath: "\(root)/\(name).\(seconds)")
        return "\(root)/\(name).\(seconds)"
    }

    /// Keeps `lease` while the ledger is open here (until cancelled): renews it every third of
    /// its length, on the node's ticks with every other lease kept here, and stores the folder's
    /// changed files under it. Calls `lost` and returns when PostgreSQL says the lease is no
    /// longer this node's.
    func keep(_ lease: ClusterLease, validity: LeaseValidity, files: StoredFiles, lost: @Sendable () -> Void) async {
        while !Task.isCancelled {
            try? await Task.sleep(until: nextRenewal(), clock: .continuous)
            guard !Task.isCancelled else { return }
            let asked = ContinuousClock.now
            do {
                let (archive, renewals) = (archive, renewals)
                try await answered("a renewal of '\(lease.ledger)'", within: renewEvery) {
                    let editsWait = try await renewals.renew(lease)
                    try await files.store(in: archive, applying: editsWait ? try await archive.pendingEdits(of: lease.ledger) : [])
                }
                validity.extend(to: asked + leaseDuration - Self.margin)
            } catch ClusterRefusal.fenced {
                logger.warning("lost a ledger's lease", metadata: ["ledger": "\(lease.ledger)", "epoch": "\(lease.epoch)"])
                validity.end()
                lost()
                return
            } catch {
                logger.warning("could not renew a ledger's lease", metadata: ["ledger": "\(lease.ledger)", "error": "\(error)"])
            }
        }
    }

    /// Gives the lease up once the ledger closed here (its files stored first), so that
    /// another node need not wait for it to run out.
    func letGo(_ files: StoredFiles) async {
        do {
            let archive = archive
            try await answered("the release of '\(files.lease.ledger)'", within: Self.answerLimit) {
                try await files.store(in: archive)
                try await archive.release(files.lease)
            }
        } catch {
            logger.warning("could not give a ledger's lease up", metadata: ["ledger": "\(files.lease.ledger)", "error": "\(error)"])
        }
    }

    /// JSON bodies up to this size, with their length known, are forwarded whole (a write's
    /// JSON), and so are answers of any type (its answer): read at once and sent in one piece,
    /// which costs a forward less than streaming them. Longer ones, those of unknown length (a
    /// change feed) and other requests (an upload or an import, whose own time limits the
    /// serving node applies) stream.
    static let wholeBodyLimit = 64 << 10

    /// Sends `request` for the ledger `name` to the node at `url` and passes its answer back:
    /// each whole when it is short and its length known (`wholeBodyLimit`), else streamed as it
    /// comes. A node that cannot be reached, or loses the ledger before it answers, is a 503
    /// ("try again") only when nothing was sent or the request is a read; otherwise a 502 —
    /// what was asked may have been done there, and a retry without an Idempotency-Key could
    /// do it twice.
    ///
    /// A streamed answer (a change feed, a download, a pull) is written to the client under the
    /// feeds' rule, in pieces of 64 KiB: a piece the client does not take within the body
    /// timeout closes its connection (the serving node's guard cannot see a client that stopped
    /// reading behind a forward).
    func forward(_ request: Request, _ name: LedgerName, to url: String, channel: any Channel) async throws -> Response {
        var outgoing = HTTPClientRequest(url: url + request.uri.path + (request.uri.query.map { "?" + $0 } ?? ""))
        outgoing.method = .init(rawValue: request.method.rawValue)
        for field in request.headers
        where !Self.hopByHop.contains(field.name.canonicalName) && field.name != ForwardedClient.addressHeader && field.name != ForwardedClient.proofHeader {
            outgoing.headers.add(name: field.name.rawName, value: field.value)
        }
        outgoing.headers.add(name: Self.forwardedBy.rawName, value: archive.node)
        // A sign-in is counted by its client's address, which only this node sees.
        if SessionRoutes.isPublic(request), let key = await forwardingKey() {
            let address = SignInThrottle.addressKey(channel.remoteAddress)
            for (name, value) in ForwardedClient.headers(address: address, method: request.method.rawValue, path: request.uri.path, key: key) {
                outgoing.headers.add(name: name.rawName, value: value)
            }
        }
        // (NIO's parser refuses a Content-Length that is not digits; a negative one is not passed on either way.)
        let length = request.headers[.contentLength].flatMap { Int64($0) }.flatMap { $0 >= 0 ? $0 : nil }
        if !Self.hasBody(request) {
            // Nothing to send, and its body is not touched: a request without one may be
            // forwarded again (its body's stream can be read only once — a second forward of
            // it, after an answer cut off or a 503, hit Hummingbird's assertion).
        } else if isJSON(request), let length, length <= Self.wholeBodyLimit {
            // Within the body timeout, as the node that serves it would read it: a client that
            // trickles a body must not hold a forward (and its connection) open forever.
            let body = request.body
            outgoing.body = .bytes(
                try await withDeadline(bodyTimeout) {
                    do { return try await body.collect(upTo: Int(length)) } catch {
                        throw APIError(.badRequest, "body_incomplete", "the body ended before the \(length) bytes its Content-Length names")
                    }
                })
        } else {
            outgoing.body = .stream(request.body, length: length.map { .known($0) } ?? .unknown)
        }
        let answer: HTTPClientResponse
        do {
            let (sending, logger) = (outgoing, logger)
            answer = try await whileServing(name, at: url) { try await Self.http.execute(sending, deadline: .now() + .hours(24), logger: logger) }
        } catch {
            guard request.method == .get || request.method == .head || Self.neverSent(error) else {
                throw APIError(
                    .badGateway, "answer_cut_off",
                    "the node serving this ledger went away before it answered; what was asked may have been done")
            }
            var unavailable = APIError(.serviceUnavailable, "ledger_unavailable", "the node serving this ledger does not answer; try again shortly")
            unavailable.retryAfter = 1
            throw unavailable
        }
        var headers = HTTPFields()
        for header in answer.headers where !Self.hopByHop.contains(header.name.lowercased()) {
            if let name = HTTPField.Name(header.name) { headers.append(HTTPField(name: name, value: header.value)) }
        }
        let status = HTTPResponse.Status(code: Int(answer.status.code), reasonPhrase: answer.status.reasonPhrase)
        if request.method != .head, let length = answer.headers.first(name: "content-length").flatMap(Int.init), length >= 0,
            length <= Self.wholeBodyLimit
        {
            // The serving node stopped part-way through its answer: what was asked may have been
            // done (a write answered 201 before its body), so no "try again" (a retry without an
            // Idempotency-Key could write twice).
            do { return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: try await answer.body.collect(upTo: length))) } catch {
                throw APIError(
                    .badGateway, "answer_cut_off", "the node serving this ledger stopped part-way through its answer; what was asked may have been done")
            }
        }
        // Every streamed answer (a change feed, a pull, a download, an export) is written under
        // a guard, as `StalledAnswerMiddleware` guards a node's own: a client that stopped
        // reading a forwarded pull held its connection here for good (found by review).
        let (body, guardian) = (answer.body, AnswerGuard(channel: channel, writeDeadline: bodyTimeout))
        return Response(
            status: status, headers: headers,
            body: ResponseBody { writer in
                let watching = Task { await guardian.watch { true } }
                defer { watching.cancel() }
                for try await chunk in body {
                    try await guardian.writing(chunk) { try await writer.write($0) }
                }
                try await guardian.writing { try await writer.finish(nil) }
            })
    }

    /// What `send` answers, unless PostgreSQL says first that the node at `url` no longer
    /// serves `name` (asked once a lease while `send` waits): a node that stopped — paused, or
    /// its host gone — may still accept a connection and never answer, and a forward to it
    /// waited for its day-long deadline, holding the client's connection. The watcher is a
    /// task of its own, cancelled once the answer came (not awaited: a question to a hung
    /// PostgreSQL must not hold an answer that arrived).
    private func whileServing<Answer: Sendable>(
        _ name: LedgerName, at url: String, _ send: @escaping @Sendable () async throws -> Answer
    ) async throws -> Answer {
        let sending = Task { try await send() }
        let lost = LostFlag()
        let (archive, every) = (archive, leaseDuration)
        let watcher = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: every)
                if Task.isCancelled { return }
                let serving: (node: String, url: String)?
                do { serving = try await archive.servingNode(of: name.text) } catch { continue }  // PostgreSQL unreachable: no news
                if serving?.url != url {
                    lost.value.store(true, ordering: .releasing)
                    sending.cancel()
                    return
                }
            }
        }
        defer { watcher.cancel() }
        return try await withTaskCancellationHandler {
            do { return try await sending.value } catch {
                if lost.value.load(ordering: .acquiring) { throw OwnerGone() }
                throw error
            }
        } onCancel: {
            sending.cancel()
        }
    }

    /// Set once the watcher of a forward saw its node lose the ledger.
    private final class LostFlag: Sendable {
        let value = Atomic<Bool>(false)
    }

    /// The node a forward waited on lost the ledger before it answered.
    struct OwnerGone: Error {}

    /// Whether `error` came before the request reached the other node: no connection was made.
    static func neverSent(_ error: any Error) -> Bool {
        if let client = error as? HTTPClientError { return client == .connectTimeout || client == .getConnectionFromPoolTimeout }
        if case ChannelError.connectTimeout = error { return true }
        return error is NIOConnectionError || (error as? IOError)?.errnoCode == ECONNREFUSED
    }

    /// Whether `request` comes with a body (a length other than 0, or a transfer coding).
    static func hasBody(_ request: Request) -> Bool {
        declaredLength(request).map { $0 > 0 } ?? (request.headers[.transferEncoding] != nil)
    }

    /// Headers of one connection, not of the request (RFC 9110 §7.6.1): not forwarded.
    static let hopByHop: Set<String> = ["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host"]

    /// The client forwarded requests go through: no redirects followed (an answer is passed on
    /// as it is), a node that does not accept a connection within a second taken as down (the
    /// client is answered 503 at once, and retries once the lease has run out), and up to 256
    /// connections to each node (the client's default of 8 queued a busy owner's requests).
    /// No tracing spans: Tally exports none, and making each (for the no-op tracer) was ~0.02 ms
    /// of a forward's CPU (`perf`, BENCHMARKS.md).
    static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(1)),
            connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 256))
        configuration.tracing.tracer = nil
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()
}

/// The files of a ledger folder this node serves under `lease`, and which versions of them
/// PostgreSQL holds: each store sends the files changed since, one store at a time (a
/// sign-in's and a renewal's at once could otherwise commit an older file after a newer one).
final class StoredFiles: Sendable {
    let lease: ClusterLease
    let folder: String
    private let stored: Mutex<[String: FileVersion]>
    /// The operator's edits applied to the folder under this lease, and those of them not
    /// answered in PostgreSQL yet.
    private let edits = Mutex<(applied: Set<Int64>, unanswered: [EditAnswer])>(([], []))
    /// The store under way or last made: the next waits for it.
    private let last = Mutex<Task<Void, any Error>?>(nil)

    /// As written into `folder` from PostgreSQL just now.
    init(lease: ClusterLease, folder: String) {
        (self.lease, self.folder) = (lease, folder)
        stored = Mutex(LedgerFiles.names.reduce(into: [String: FileVersion]()) { $0[$1] = FileVersion(path: folder + "/" + $1) })
    }

    /// The most edits one store applies (a backlog is worked off a store at a time).
    static let editsPerStore = 32

    /// Stores the files changed since the last store, after it — first applying `edits` (the
    /// operator's, queued in PostgreSQL: `CredentialEdit`) not applied here yet, so that each
    /// edit's answer is stored in the transaction that stores the files it changed. One store
    /// at a time: a store left behind by its caller's time limit still holds the next back.
    func store(in archive: ClusterArchive, applying edits: [(id: Int64, edit: [UInt8])] = []) async throws {
        let store = last.withLock { last in
            let previous = last
            let next = Task {
                _ = await previous?.result
                try await self.apply(edits)
                try await self.storeChanged(in: archive)
            }
            last = next
            return next
        }
        try await store.value
    }

    private func apply(_ queued: [(id: Int64, edit: [UInt8])]) async throws {
        let folder = folder
        for (id, bytes) in queued.prefix(Self.editsPerStore) {
            guard edits.withLock({ $0.applied.insert(id).inserted }) else { continue }
            let refusal = try await BlockingThreads.run { () -> String? in
                guard bytes.count <= CredentialEdit.maxBytes else { return "an edit of more than \(CredentialEdit.maxBytes) bytes" }
                return CredentialEdit(bytes: bytes).map { $0.apply(folder: folder) } ?? "not an edit this node can read (made by a newer tally?)"
            }
            edits.withLock { $0.unanswered.append(EditAnswer(id: id, refusal: refusal)) }
        }
    }

    private func storeChanged(in archive: ClusterArchive) async throws {
        var now = stored.withLock { $0 }
        var changed: [String: [UInt8]] = [:]
        var removed: [String] = []
        for name in LedgerFiles.names {
            let version = FileVersion(path: folder + "/" + name)
            guard version != now[name] else { continue }
            now[name] = version
            if let data = FileManager.default.contents(atPath: folder + "/" + name) { changed[name] = Array(data) } else { removed.append(name) }
        }
        let answering = edits.withLock { $0.unanswered }
        try await archive.store(changed, removing: removed, answering: answering, of: lease)
        stored.withLock { $0 = now }
        edits.withLock { $0.unanswered.removeAll { answer in answering.contains(answer) } }
    }
}

/// Another node holds the ledger's lease: the request is forwarded there.
struct LedgerServedElsewhere: Error {
    let node: String
    let url: String
}

/// Until when this node may serve a ledger whose lease it holds, by its own clock.
final class LeaseValidity: Sendable {
    private let until: Mutex<ContinuousClock.Instant>

    init(until: ContinuousClock.Instant) { self.until = Mutex(until) }

    var isValid: Bool { until.withLock { ContinuousClock.now < $0 } }

    func extend(to instant: ContinuousClock.Instant) { until.withLock { $0 = max($0, instant) } }

    func end() { until.withLock { $0 = .now - .seconds(1) } }
}

/// In a cluster, first of all: a request for a ledger another node holds goes there; one for
/// a ledger nobody holds takes it here (its files then here and current, for the
/// authentication that follows). The ledger is held until the response is written.
struct ClusterMiddleware: RouterMiddleware {
    let ledgers: HostedLedgers
    let cluster: ClusterHosting

    func handle(_ request: Request, context: TallyRequestContext, next: (Request, TallyRequestContext) async throws -> Response) async throws -> Response {
        guard let name = try HostedLedgers.ledgerName(inPath: request.uri.path) else { return try await next(request, context) }
        // A request target holds no fragment (RFC 9112 §3.2); one would be dropped on the way to
        // another node, which would then answer another path than this node looked at (a
        // sign-in, say, that this node did not take for one).
        guard !request.uri.path.contains("#") else { throw APIError(.badRequest, "invalid_path", "a request's path holds no '#'") }
        // No credential and no sign-in: the authentication below answers 401 wherever the
        // ledger is, so nothing is taken, opened or forwarded for a stranger's request.
        if !SessionRoutes.isPublic(request), request.headers[.authorization] == nil, SessionCookie.value(in: request) == nil {
            return try await next(request, context)
        }
        let isForwarded = request.headers[ClusterHosting.forwardedBy] != nil
        var context = context
        if isForwarded, SessionRoutes.isPublic(request), let key = await cluster.forwardingKey() {
            context.forwardedClientAddress = ForwardedClient.address(of: request, key: key)
        }
        // Served elsewhere lately: forwarded without asking PostgreSQL. A node that does not
        // take the connection (it died, or came back elsewhere), or answers 503 (the ledger
        // moved on), is asked about again below.
        if !isForwarded, !ledgers.isOpen(name), let url = cluster.knownServer(of: name) {
            // Asked again only for a request without a body: one whose body went (part of it)
            // to a node that then failed cannot be sent twice.
            if ClusterHosting.hasBody(request) { return try await forward(request, name, to: url, channel: context.channel) }
            do {
                let response = try await forward(request, name, to: url, channel: context.channel)
                if response.status != .serviceUnavailable { return response }
            } catch let error as APIError where error.status != .serviceUnavailable {
                throw error  // it may have been done there (or it is the client's own failing): not sent again
            } catch {}
        }
        let held: LedgerLease
        do {
            held = try await ledgers.lease(name)
        } catch let elsewhere as LedgerServedElsewhere {
            guard !isForwarded else {
                var moving = APIError(.serviceUnavailable, "ledger_moving", "ledger '\(name)' is changing nodes; try again shortly")
                moving.retryAfter = 1
                throw moving
            }
            cluster.remember(name, servedAt: elsewhere.url)
            return try await forward(request, name, to: elsewhere.url, channel: context.channel)
        } catch let missing as APIError where missing.status == .notFound {
            // The cluster has no such ledger: answered below as a wrong credential or password
            // is for one that exists (401), so a stranger cannot tell which ledgers there are.
            return try await next(request, context)
        }
        return try await next(request, context).holding(held)
    }

    /// Forwards to `url`; a node that answers 503 (it does not serve the ledger, or cannot
    /// now), does not answer, or stops part-way, is forgotten as the ledger's server (not for
    /// the client's own failings: a body too slow or cut short).
    private func forward(_ request: Request, _ name: LedgerName, to url: String, channel: any Channel) async throws -> Response {
        do {
            let response = try await cluster.forward(request, name, to: url, channel: channel)
            if response.status == .serviceUnavailable { cluster.remember(name, servedAt: nil) }
            return response
        } catch let error as APIError where error.status.code < 500 {
            throw error  // the client's own: a body too slow or cut short
        } catch {
            cluster.remember(name, servedAt: nil)
            throw error
        }
    }
}
