import Crypto
import Foundation
import TallyCore
import TallyLedger
import TallyLog
import TallySync

/// A Tally service this replica syncs with: a server of one ledger (`http://host:8080`) or a
/// hosted ledger (`https://host/v1/ledgers/kim-family`), and how to sign in to it — a token
/// with the `replicate` scope, or a member's name and password (a hosted household's member,
/// whose device then pushes only that member's own events).
public struct SyncServer: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var url: String
    public var credentials: Credentials

    /// Printed, dumped or logged, they show the member's name, never a token or password.
    public enum Credentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        case token(String)
        case member(name: String, password: String)

        public var description: String {
            switch self {
            case .token: "token(…)"
            case .member(let name, _): "member(\(name), password: …)"
            }
        }
        public var debugDescription: String { description }
        public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .enum) }
    }

    public init(url: String, token: String) { (self.url, credentials) = (url, .token(token)) }

    public init(url: String, member name: String, password: String) { (self.url, credentials) = (url, .member(name: name, password: password)) }

    /// The URL as it may be shown and remembered (no credentials, query or fragment).
    var key: String { Peer.displayURL(url) }

    /// Printed, dumped or logged: the URL as it may be shown, and the credentials' kind.
    public var description: String { "SyncServer(\(key), \(credentials))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["url": key, "credentials": credentials]) }
}

/// How a sync retries a server that cannot be reached or is busy: up to `attempts` tries,
/// waiting a random time up to `first`, 2 × `first`, 4 × `first`… (at most `longest`) between
/// them — "full jitter", so that phones coming back online together do not come back in step.
public struct RetryPolicy: Sendable {
    public var attempts: Int
    public var first: Duration
    public var longest: Duration

    /// `first` and `longest` are taken within 0 … a year (`Intervals`).
    public init(attempts: Int = 6, first: Duration = .milliseconds(500), longest: Duration = .seconds(60)) {
        (self.attempts, self.first, self.longest) = (max(1, attempts), Intervals.bounded(first, shortest: .zero), Intervals.bounded(longest, shortest: .zero))
    }

    /// The wait before try number `attempt + 1` (`attempt` ≥ 1).
    func wait(after attempt: Int) -> Duration {
        // Bounded here too: `first` and `longest` may have been set after `init`.
        let (first, longest) = (Intervals.bounded(first, shortest: .zero), Intervals.bounded(longest, shortest: .zero))
        let ceiling = min(longest, first * (1 << min(attempt - 1, 20)))
        return ceiling * Double.random(in: 0...1)
    }
}

extension Replica {
    /// Pulls what this replica lacks from `server` and pushes what the server lacks, with the
    /// service's own replication protocol, retrying (`retry`) while the server is unreachable
    /// or busy. Events arrive in verified batches and each batch is applied once: a sync cut
    /// short — the app suspended or killed — keeps what arrived and resumes where it stopped.
    /// Throws at once when the server refuses the credentials (`syncStatus` says "needs
    /// sign-in") or what it sent (a `SyncRejection`).
    ///
    /// When the server holds another chain of this replica's own origin, this folder is one of
    /// two live copies of a replica: it takes a new identity (`identityChange` says so in
    /// words), keeping every change of its own, and syncs again.
    @discardableResult
    public func sync(with server: SyncServer, retry: RetryPolicy = RetryPolicy(), attachments: AttachmentFetching = .whenAsked) async throws
        -> Ledger.SyncReport
    {
        try await sync(with: server, retry: retry, attachments: attachments, through: { $0 })
    }

    /// `sync(with:retry:attachments:)` over the transport `through` makes of the server's
    /// (tests stand between the two).
    func sync(
        with server: SyncServer, retry: RetryPolicy, attachments: AttachmentFetching, through wrap: @escaping @Sendable (ReplicaClient) -> any ReplicaTransport
    ) async throws -> Ledger.SyncReport {
        if case .member(let name, _) = server.credentials, actor != Ledger.memberActor(name) {
            throw ValidationError(
                field: "actor",
                "a replica that syncs as the member \(name) writes as 'member:\(name)' (the server takes only their own events from it); open it with that actor"
            )
        }
        let folder = path
        var attempt = 0
        var splitOff = false
        var forkToSplit: SyncRejection?  // shown by the server: this folder splits off, then syncs again
        var signedInAgain = false
        while true {
            attempt += 1
            var sessionSecret: String?  // the member's session this try signed with
            do {
                let client = try await self.transport(for: server)
                if case .session(let secret, _) = client.credential { sessionSecret = secret }
                let transport = wrap(client)
                if let forked = forkToSplit {
                    // Within the try, so that a split cut short (the server out of reach, a
                    // session expired) is retried and recorded as any sync is. One another
                    // process (the widget) made meanwhile is not made again (`takeNewIdentity`).
                    try await takeNewIdentity(syncingWith: transport, because: forked)
                    (forkToSplit, splitOff) = (nil, true)
                }
                return try await writing { ledger in
                    let own = ledger.directory.identity.origin
                    let ownBefore = ledger.vector[own]
                    // A sync ended by an attachment quota (the server's refused some of this
                    // replica's blobs) after the events went both ways: remembered as a sync whose events are held, with
                    // the refusal as the status's reason, and not tried again at once (each try
                    // would send the refused blobs again). Blobs it refused within the hour are
                    // not sent again (`RefusedBlobs`; they still count as refused).
                    let refusedBefore = SyncMemory.read(folder).servers[server.key]?.blobsRefused ?? RefusedBlobs()
                    var report: Ledger.SyncReport?
                    var quotaEnding: (any AttachmentQuotaEnding)?
                    do {
                        report = try await ledger.sync(
                            with: transport, echoingOwnLast: true, fetchingBlobs: attachments == .all, withholdingBlobs: refusedBefore.withheld())
                    } catch let ending as any AttachmentQuotaEnding { quotaEnding = ending }
                    let held = ledger.heldAfterSync(ownBefore: ownBefore, leftOut: report?.leftOut)
                    let refusedBlobs = refusedBefore.after(quotaEnding?.peerRefusal)
                    try SyncMemory.update(folder, server: server.key) { memory in
                        memory = .init(
                            heldAtLastSync: held, lastSync: Date(), unreachableSince: nil, refusedCredentials: false,
                            refusedBecause: quotaEnding.map { String("\($0)".prefix(200)) },
                            blobsRefused: refusedBlobs.isEmpty ? nil : refusedBlobs)
                    }
                    guard let report else { throw quotaEnding ?? SyncRejection(source: server.key, reason: "the sync ended without a report") }
                    return report
                }
            } catch let forked as SyncRejection
                where forked.forkedOrigin != nil && !splitOff && forkToSplit == nil && forked.forkedOrigin == (try? directory)?.identity.origin
            {
                forkToSplit = forked
                attempt -= 1
                continue
            } catch let expired as SyncRejection
                where expired.httpStatus == 401 && !signedInAgain && sessionSecret != nil
                && forgetSession(for: server, refused: sessionSecret)
            {
                _ = expired
                signedInAgain = true  // the member's session ended (expired, signed out): sign in again, once
                attempt -= 1
                continue
            } catch {
                switch Self.retrying(error) {
                case .never:
                    if let refused = error as? SyncRejection {  // said, so the person sees why nothing moves
                        try? SyncMemory.update(folder, server: server.key) { $0.refusedBecause = String(refused.reason.prefix(200)) }
                    }
                    throw error
                case .signInFirst:
                    try? SyncMemory.update(folder, server: server.key) { $0.refusedCredentials = true }
                    throw error
                case .whenReachable:
                    try? SyncMemory.update(folder, server: server.key) { $0.unreachableSince = $0.unreachableSince ?? Date() }
                case .whenUnlocked: break
                }
                guard attempt < retry.attempts, !Task.isCancelled else { throw error }
                try await Task.sleep(for: retry.wait(after: attempt))
            }
        }
    }

    /// The transport to `server`: with its token, or with a member's session — the one this
    /// replica signed in with before, if `password` is the one it signed in with, or a new one.
    func transport(for server: SyncServer) async throws -> ReplicaClient {
        switch server.credentials {
        case .token(let token):
            return ReplicaClient(baseURL: server.url, token: token, label: server.key)
        case .member(let name, let password):
            let key = Self.sessionKey(server, name: name)
            if let kept = try sessions.read()[key], signedIn(key, with: password, kept) {
                return ReplicaClient(baseURL: server.url, credential: kept.credential, label: server.key)
            }
            let refusedMemo = Self.memo(password, key)
            let refusedBefore = refusedPasswords.withLock { $0[key] }.flatMap { $0.memo == refusedMemo ? $0 : nil }
            if let refused = refusedBefore, ContinuousClock.now - refused.at < Self.refusedPasswordHold(times: refused.times) {
                throw SyncRejection(
                    source: server.key + ": POST /session", reason: "the server refused this password at the last sign-in; give the member's current one",
                    httpStatus: 401)
            }
            let session: ReplicaClient.Credential
            do { session = try await ReplicaClient.signIn(baseURL: server.url, name: name, password: password) } catch let refused as SyncRejection
                where refused.httpStatus == 401
            {
                // Only the server's word that the name and password do not sign in (a hosted
                // ledger missing answers the same, on purpose: it is not told apart); another
                // 401 says nothing of the password.
                if refused.reason.contains("(wrong_credentials)") {
                    refusedPasswords.withLock { $0[key] = (refusedMemo, ContinuousClock.now, (refusedBefore?.times ?? 0) + 1) }
                }
                throw refused
            }
            refusedPasswords.withLock { $0[key] = nil }
            guard case .session(let secret, let csrf) = session else { return ReplicaClient(baseURL: server.url, credential: session, label: server.key) }
            let hash = try KeptPassword.hash(password)
            try sessions.update { kept in
                kept = kept.filter { $0.value.passwordHash != nil }  // an older version's entries held a fast digest of the password
                kept[key] = SyncMemory.KeptSession(secret: secret, csrf: csrf, passwordHash: hash)
            }
            checkedPasswords.withLock { $0[key] = Self.memo(password, hash) }
            return ReplicaClient(baseURL: server.url, credential: session, label: server.key)
        }
    }

    /// Forgets the member's session with `server` whose secret `refused` was refused (it
    /// ended: expired, signed out, or another password); false when there was none (a token),
    /// or it was kept for another password. True, forgetting nothing, when the session kept now
    /// is another one (another process — the widget — signed in again meanwhile): the next try
    /// uses it.
    func forgetSession(for server: SyncServer, refused: String?) -> Bool {
        guard case .member(let name, let password) = server.credentials else { return false }
        let key = Self.sessionKey(server, name: name)
        return
            (try? sessions.update { kept in
                guard let session = kept[key], signedIn(key, with: password, session) else { return false }
                if session.secret == refused { kept[key] = nil }
                return true
            }) ?? false
    }

    /// Whether `kept` was signed in with `password`: checked against its scrypt hash once per
    /// process and hash (another process may have signed in again since, with another
    /// password), then against the memo of what was checked (in memory only).
    func signedIn(_ key: String, with password: String, _ kept: SyncMemory.KeptSession) -> Bool {
        guard let hash = kept.passwordHash else { return false }
        let memo = Self.memo(password, hash)
        if checkedPasswords.withLock({ $0[key] }) == memo { return true }
        guard KeptPassword.matches(password, hash) else { return false }
        checkedPasswords.withLock { $0[key] = memo }
        return true
    }

    /// Which kept session a member's credentials use: the server and the name. The password's
    /// scrypt hash is kept with it (another password typed in signs in again, and is checked):
    /// the file holds nothing from which the password is cheaply guessed.
    static func sessionKey(_ server: SyncServer, name: String) -> String { server.key + " " + name }

    /// A process's memo of a password checked against a hash (never written anywhere).
    static func memo(_ password: String, _ hash: String) -> [UInt8] { Array(SHA256.hash(data: Data((hash + "\u{0}" + password).utf8))) }

    /// Sends the attachments `server` refused for its quota again at the next sync, without
    /// waiting out the hour: for an app whose person was told the household's storage grew.
    public func sendRefusedAttachmentsAgain(to server: SyncServer) throws {
        try SyncMemory.update(path, server: server.key) { $0.blobsRefused = nil }
    }

    enum Retrying { case never, signInFirst, whenReachable, whenUnlocked }

    /// Whether a failed sync is worth another try: not when the server refused the
    /// credentials, refused a request it will never take, or sent what this replica refused
    /// (a `SyncRejection` with no status), nor when this replica's own log is at fault. A push
    /// the server cut for its pace or its deadline (408) is: the next goes on from what the
    /// server verified.
    static func retrying(_ error: any Error) -> Retrying {
        switch error {
        case let refused as SyncRejection:
            switch refused.httpStatus {
            case 401?, 403?: .signInFirst
            case let status? where status == 408 || status == 429 || status >= 500: .whenReachable
            default: .never
            }
        case is any AttachmentQuotaEnding: .never  // until attachments are removed, or a quota raised
        case LogError.writerLocked: .whenUnlocked  // the widget's write, or another sync
        case is LogError, is CancellationError: .never
        default: .whenReachable  // refused connections, timeouts, a connection cut mid-transfer
        }
    }

    /// Which attachments a sync brings: every one the replica's expenses and to-dos name, or
    /// none — each is then fetched when the app asks for it (`attachment(_:from:)`, and first
    /// its thumbnail, `thumbnail(_:size:from:)`). This replica's own are always pushed.
    public enum AttachmentFetching: Sendable { case all, whenAsked }

    /// Syncs with `server` now and then every `interval` until the task is cancelled; a sync
    /// that fails is retried as `retry` says, then waits for the next round (`syncStatus`
    /// tells the person). An app starts this when it comes to the foreground. `interval` is
    /// taken within a second … a year.
    public func syncContinuously(with server: SyncServer, every interval: Duration = .seconds(30), retry: RetryPolicy = RetryPolicy()) -> Task<Void, Never> {
        let interval = Intervals.bounded(interval, shortest: .seconds(1))
        return Task {
            while !Task.isCancelled {
                _ = try? await sync(with: server, retry: retry)
                try? await Task.sleep(for: interval)
            }
        }
    }

    /// Where this replica stands with `server`, from the last sync and this replica's log.
    public func syncStatus(with server: SyncServer) throws -> SyncStatus {
        let memory = SyncMemory.read(path).servers[server.key] ?? SyncMemory.Server()
        if memory.refusedCredentials { return .needsSignIn }
        if let reason = memory.refusedBecause { return .refused(reason) }
        let mine = try Ledger.vector(of: try directory)
        var waiting = 0
        for (origin, sequence) in mine.sequences where sequence > memory.heldAtLastSync[origin] {
            waiting += Int(clamping: sequence - memory.heldAtLastSync[origin])
        }
        if let since = memory.unreachableSince { return .offline(since: since, changesWaiting: waiting) }
        return waiting == 0 ? .upToDate : .changesWaiting(waiting)
    }
}
