import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization
import TallyCluster
import TallyCore
import TallyLedger
import TallyLog

/// How many hosted ledgers stay open, and for how long.
public struct HostingLimits: Sendable {
    /// The most ledgers open at once. Opening one more closes the least recently used ledger
    /// that no request holds; when every open ledger is in use, the set grows past this until
    /// one is let go (requests are bounded by the connection limit). `tally serve` sets it to
    /// `DescriptorBudget.defaultMaxOpen` unless told.
    public var maxOpen = 100
    /// The most ledgers open at once even when every one is held: what the descriptor limit
    /// holds beside the connections (`DescriptorBudget.maxOpenLedgers`). A request for one more
    /// is a 503 until one is let go: running out of descriptors would kill the process.
    public var hardMaxOpen = Int.max
    /// A ledger no request used for this long is closed.
    public var idleClose: Duration = .seconds(300)
    /// A ledger no request used for this long, though open, gives back what its idle
    /// connections to the views hold (memory and descriptors; ~0.7 MiB a ledger otherwise).
    public var idleRelease: Duration = .seconds(15)
    /// When the ledgers' own background work runs while they are open.
    public var schedule = BackgroundSchedule()
    /// bcrypt's cost for members' passwords (12; lower only in tests).
    public var bcryptCost: UInt8 = 12

    public init() {}
}

/// `tally serve --ledgers DIR`: every folder of `DIR` named by a `LedgerName` is a ledger's
/// data directory, served at `/v1/ledgers/{ledger}/…`.
///
/// Ledgers open when a request names them and close when idle: at most `maxOpen` are open,
/// least recently used first out, so a server holding 10,000 ledgers on disk holds the files
/// and memory of the few in use. Threads are the process's (`BlockingThreads`), not a
/// ledger's. A request holds its ledger (a `LedgerLease`) until its response is written, so a
/// ledger is never closed under a request, a stream or a download; a ledger being closed is
/// opened again only once its writer let go, so no two writers ever hold one log.
///
/// One ledger's failure — it cannot be opened (a damaged log, a full disk, another process
/// holding its writer lock) — is that ledger's 503; the others go on.
public final class HostedLedgers: LedgerRegistry, Service {
    /// The folder of ledgers.
    public let root: String
    public let signIns = SignInThrottle()
    let limits: HostingLimits
    let logger: Logger
    /// Opens one ledger's service (the service's options, a shared thumbnail queue), writing
    /// through the archive given (on a cluster).
    let open: @Sendable (DataDirectory, (any LedgerArchive)?) throws -> TallyService
    /// The cluster this server is a node of (`--cluster`), or nil: every ledger's lease is
    /// then taken before it opens, and a ledger another node holds is forwarded there.
    let cluster: ClusterHosting?
    private let state = Mutex(State())

    private struct Entry {
        let service: TallyService
        /// The folder it was opened from (device and inode): a ledger deleted and made again
        /// under the same name while open is another folder, and this entry is not it.
        let folder: FolderIdentity
        /// Requests holding it now.
        var leases = 0
        var lastUse = ContinuousClock.now
        /// Its idle connections were let go since it was last used (`releaseIdle`).
        var released = false
        /// Its recurrences, snapshots and peer syncs, while it is open (and its lease's renewals).
        let background: Task<Void, Never>
        /// On a cluster: the lease it is served under.
        let clusterLease: ClusterLease?
        let validity: LeaseValidity?
        let storedFiles: StoredFiles?

        /// Whether it may still be served: on a cluster, while its lease is valid by this
        /// node's clock and its writer has not stopped (an archive refused or failed).
        var isServable: Bool {
            guard let validity else { return true }
            return validity.isValid && service.ledger.stoppedBecause == nil
        }
    }

    private struct State {
        var open: [LedgerName: Entry] = [:]
        /// Ledgers being opened: a second request for one waits for the first's open.
        var opening: [LedgerName: Task<TallyService, any Error>] = [:]
        /// Ledgers being closed: opened again only once their writer let go.
        var closing: [LedgerName: Task<Void, Never>] = [:]
        /// Each ledger's tokens and members, read from its folder without opening it (one per
        /// ledger on disk that a request named; a store costs a few paths and what its files hold).
        var credentials: [LedgerName: LedgerCredentials] = [:]
        /// Since the server started, for its `/metrics`.
        var opened = 0, closed = 0, failedOpens = 0
    }

    /// Who may read the server's own `/metrics`: the operator's tokens (`LedgerFolder.operatorTokens`).
    private let operatorCredentials: LedgerCredentials

    public init(
        root: String, limits: HostingLimits = HostingLimits(), cluster: ClusterHosting? = nil, logger: Logger,
        open: @escaping @Sendable (DataDirectory, (any LedgerArchive)?) throws -> TallyService
    ) {
        self.root = root
        self.limits = limits
        self.cluster = cluster
        self.logger = logger
        self.open = open
        let folder = LedgerFolder(root: root)
        operatorCredentials = LedgerCredentials(
            tokens: folder.operatorTokens, members: MemberStore(folder: folder.operatorPath, cost: limits.bcryptCost), apiPath: "/metrics")
    }

    /// Whether `credentials` are the operator's (the same token store), not a ledger's.
    func areOperators(_ credentials: LedgerCredentials?) -> Bool { credentials?.tokens === operatorCredentials.tokens }

    /// The open set now, and what it did since the server started (the server's `/metrics`).
    func counts() -> HostingCounts {
        let (services, counts) = state.withLock { state in
            (
                state.open.values.map(\.service),
                HostingCounts(open: state.open.count, opened: state.opened, closed: state.closed, failedOpens: state.failedOpens)
            )
        }
        var withFeeds = counts
        withFeeds.changeFeeds = services.reduce(0) { $0 + $1.openStreams.total }
        return withFeeds
    }

    /// The folder of the ledger `name` (which may not exist).
    public func path(of name: LedgerName) -> String { root + "/" + name.text }

    public var passwordCost: UInt8 { limits.bcryptCost }

    /// Whether `name` is open here now.
    func isOpen(_ name: LedgerName) -> Bool { state.withLock { $0.open[name] != nil } }

    /// How many ledgers are open now.
    public var openCount: Int { state.withLock { $0.open.count } }

    /// The tokens and members of the ledger a path `/v1/ledgers/{ledger}/…` names, read from
    /// its folder without opening it; nil for a ledger that does not exist. A name that is not
    /// a `LedgerName` is a 400 before any file is looked at; a path outside every ledger is a 404.
    public func credentials(for request: Request) throws -> LedgerCredentials? {
        // The server's own metrics: the operator's tokens, no ledger's.
        if request.uri.path == "/metrics" || request.uri.path == "/metrics/" { return operatorCredentials }
        guard let name = try Self.ledgerName(inPath: request.uri.path) else {
            throw APIError(.notFound, "not_found", "this server hosts several ledgers: every route is under /v1/ledgers/{ledger}/")
        }
        if let cached = state.withLock({ $0.credentials[name] }) { return cached }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path(of: name), isDirectory: &isFolder), isFolder.boolValue else { return nil }
        var credentials = LedgerCredentials(
            tokens: TokenStore(folder: path(of: name)), members: MemberStore(folder: path(of: name), cost: limits.bcryptCost),
            apiPath: "/v1/ledgers/\(name)")
        if cluster != nil { credentials.afterChange = { [weak self] in try await self?.storeFilesNow(name) } }
        state.withLock { $0.credentials[name] = credentials }
        return credentials
    }

    /// The ledger named by a path `/v1/ledgers/{ledger}/…`, opened if it is closed; nil for a
    /// path that names none, or a caller not known. A name that is not a `LedgerName` is a 400.
    public func lease(for request: Request, authenticated: Bool) async throws -> LedgerLease? {
        guard authenticated, let name = try Self.ledgerName(inPath: request.uri.path) else { return nil }
        return try await lease(name)
    }

    /// The `{ledger}` of `/v1/ledgers/{ledger}` or `/v1/ledgers/{ledger}/…`, checked.
    static func ledgerName(inPath path: String) throws -> LedgerName? {
        let prefix = "/v1/ledgers/"
        guard path.hasPrefix(prefix) else { return nil }
        let segment = path.dropFirst(prefix.count).prefix { $0 != "/" }
        guard !segment.isEmpty else { return nil }
        return try LedgerName(String(segment))
    }

    /// Holds the ledger `name`, opening it first if it is closed. The request that opens a
    /// ledger holds it from the moment it is open, so it cannot be closed again before anyone
    /// used it (when every other open ledger is in use, the open set grows past `maxOpen`).
    public func lease(_ name: LedgerName) async throws -> LedgerLease {
        while true {
            // Looked at each time round: on a cluster, opening makes the folder (or moves a
            // diverged one aside), and a waiter must not take that for a ledger made anew.
            let folder = FolderIdentity(path(of: name))
            enum Step {
                case leased(TallyService)
                case open(Task<TallyService, any Error>)
                case wait(Task<TallyService, any Error>)
                case waitForClose(Task<Void, Never>)
                case full
            }
            let step = state.withLock { state -> Step in
                if var entry = state.open[name] {
                    // Deleted and made again while open: close the old one, open the new one.
                    guard entry.folder == folder else {
                        startClosing(name, &state)
                        state.credentials[name] = nil
                        return .waitForClose(state.closing[name] ?? Task {})
                    }
                    // On a cluster, a lease run out or a writer stopped: closed, then taken again.
                    guard entry.isServable else {
                        startClosing(name, &state)
                        return .waitForClose(state.closing[name] ?? Task {})
                    }
                    entry.leases += 1
                    entry.lastUse = .now
                    entry.released = false
                    state.open[name] = entry
                    return .leased(entry.service)
                }
                if let opening = state.opening[name] { return .wait(opening) }
                if let closing = state.closing[name] { return .waitForClose(closing) }
                if state.open.count + state.opening.count + state.closing.count >= limits.hardMaxOpen {
                    // At the descriptors' limit: a ledger being closed frees its place in a
                    // moment; else the least recently used idle one makes room. Only when every
                    // open ledger is held by a request is there no room.
                    if state.closing.isEmpty, let victim = leastRecentlyUsedIdle(state) { startClosing(victim, &state) }
                    if let closing = state.closing.values.first { return .waitForClose(closing) }
                    return .full
                }
                let opening = Task { try await self.openLedger(name) }
                state.opening[name] = opening
                return .open(opening)
            }
            switch step {
            case .leased(let service):
                return lease(service, name)
            case .open(let opening):
                return lease(try await opening.value, name)  // opened holding one lease: this one
            case .wait(let opening):
                _ = try await opening.value  // its failure is every waiter's
            case .waitForClose(let closing):
                await closing.value
            case .full:
                var error = APIError(
                    .serviceUnavailable, "server_busy", "this server holds as many ledgers open as its file descriptors allow; try again shortly")
                error.retryAfter = 1
                throw error
            }
        }
    }

    private func lease(_ service: TallyService, _ name: LedgerName) -> LedgerLease {
        LedgerLease(service) { [weak self] in self?.release(name, service) }  // weak: a lease never keeps the registry
    }

    /// Opens `name` on the blocking threads and adds it to the open set, held once (for the
    /// request that opened it), then closes the least recently used idle ledgers beyond `maxOpen`.
    private func openLedger(_ name: LedgerName) async throws -> TallyService {
        let path = path(of: name)
        var taken: (lease: ClusterLease, validity: LeaseValidity, files: StoredFiles)?
        do {
            if let cluster { taken = try await cluster.take(name, folder: path) }
            let archive: LeasedArchive? = if let cluster, let taken { LeasedArchive(cluster.archive, lease: taken.lease) } else { nil }
            let folder = FolderIdentity(path)
            let service = try await BlockingThreads.run { [open] () throws -> TallyService in
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else {
                    throw APIError(.notFound, "not_found", "no ledger named '\(name)'")
                }
                let directory: DataDirectory
                do { directory = try DataDirectory(path: path) } catch {
                    throw APIError(.serviceUnavailable, "ledger_unavailable", "ledger '\(name)' cannot be opened: its folder is not a data directory")
                }
                return try open(directory, archive)
            }
            let kept = taken
            let background = Task {
                await withDiscardingTaskGroup { group in
                    for work in service.backgroundServices(limits.schedule) { group.addTask { try? await work.run() } }
                    if let cluster, let taken = kept {
                        group.addTask {
                            await cluster.keep(taken.lease, validity: taken.validity, files: taken.files) { [weak self] in
                                self?.lost(name, epoch: taken.lease.epoch)
                            }
                        }
                    }
                }
            }
            state.withLock { state in
                state.opening[name] = nil
                state.open[name] = Entry(
                    service: service, folder: folder, leases: 1, background: background, clusterLease: taken?.lease, validity: taken?.validity,
                    storedFiles: taken?.files)
                state.opened += 1
            }
            logger.info("opened a ledger", metadata: ["ledger": "\(name)"])
            closeLeastRecentlyUsed()
            return service
        } catch {
            state.withLock { state in
                state.opening[name] = nil
                if !(error is APIError || error is LedgerServedElsewhere) { state.failedOpens += 1 }
            }
            if let cluster, let taken { await cluster.letGo(taken.files) }
            if error is APIError || error is LedgerServedElsewhere { throw error }
            logger.error("a ledger could not be opened", metadata: ["ledger": "\(name)", "error": "\(error)"])
            if case LogError.writerLocked = error {
                throw APIError(.serviceUnavailable, "ledger_unavailable", "ledger '\(name)' is held by another process; try again later")
            }
            throw APIError(.serviceUnavailable, "ledger_unavailable", "ledger '\(name)' cannot be opened now; the operator has been told")
        }
    }

    /// On a cluster, stores the files of `name` that changed (a sign-in's session…) in
    /// PostgreSQL now, before the change is answered; a 503 if PostgreSQL does not take them.
    func storeFilesNow(_ name: LedgerName) async throws {
        guard let cluster, let files = state.withLock({ $0.open[name]?.storedFiles }) else { return }  // not served here: nothing of it changed here
        do {
            let archive = cluster.archive
            try await answered("the files of '\(name)'", within: ClusterHosting.answerLimit) { try await files.store(in: archive) }
        } catch {
            var unavailable = APIError(.serviceUnavailable, "cluster_unavailable", "the change could not be stored in the cluster; try again shortly")
            unavailable.retryAfter = 1
            throw unavailable
        }
    }

    /// On a cluster, PostgreSQL said the lease of `name` under `epoch` is no longer this
    /// node's: the ledger closes here (if it is still the one opened under that lease).
    private func lost(_ name: LedgerName, epoch: Int64) {
        state.withLock { state in
            guard state.open[name]?.clusterLease?.epoch == epoch else { return }
            startClosing(name, &state)
        }
    }

    /// A request let go of `name`, which it held open as `service` — not counted against
    /// another opening of that name (the one it held was closed under it: its lease ran out,
    /// or its folder was made anew), which would then read as idle while it is held.
    private func release(_ name: LedgerName, _ service: TallyService) {
        state.withLock { state in
            guard var entry = state.open[name], entry.service === service else { return }
            entry.leases -= 1
            entry.lastUse = .now
            state.open[name] = entry
        }
        closeLeastRecentlyUsed()
    }

    /// Closes idle ledgers, least recently used first, until at most `maxOpen` are open.
    private func closeLeastRecentlyUsed() {
        state.withLock { state in
            while state.open.count > limits.maxOpen {
                guard let victim = leastRecentlyUsedIdle(state) else { return }
                startClosing(victim, &state)
            }
        }
    }

    /// The open ledger no request holds that was used least recently.
    private func leastRecentlyUsedIdle(_ state: State) -> LedgerName? {
        state.open.filter({ $0.value.leases == 0 }).min(by: { $0.value.lastUse < $1.value.lastUse })?.key
    }

    /// Closes every ledger no request used for `idleClose`.
    func closeIdle(now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            for (name, entry) in state.open where entry.leases == 0 && now - entry.lastUse >= limits.idleClose {
                startClosing(name, &state)
            }
        }
    }

    /// Lets the ledgers no request used for `idleRelease` give back what their idle
    /// connections hold, on the blocking threads; a request leasing one meanwhile is not held
    /// up (the release waits for nothing a request holds).
    func releaseIdle(now: ContinuousClock.Instant = .now) async {
        let idle = state.withLock { state -> [TallyService] in
            var idle: [TallyService] = []
            for (name, entry) in state.open where entry.leases == 0 && !entry.released && now - entry.lastUse >= limits.idleRelease {
                state.open[name]?.released = true
                idle.append(entry.service)
            }
            return idle
        }
        guard !idle.isEmpty else { return }
        _ = try? await BlockingThreads.run { for service in idle { service.releaseMemory() } }
    }

    /// Moves `name` from open to closing: its background work stops, in-flight appends finish
    /// and its writer lets go, off the lock.
    private func startClosing(_ name: LedgerName, _ state: inout State) {
        guard let entry = state.open.removeValue(forKey: name) else { return }
        state.closing[name] = Task {
            entry.background.cancel()
            await entry.background.value
            _ = try? await BlockingThreads.run { entry.service.close() }
            if let cluster = self.cluster, let files = entry.storedFiles { await cluster.letGo(files) }
            self.state.withLock { state in
                state.closing[name] = nil
                state.closed += 1
            }
            self.logger.info("closed a ledger", metadata: ["ledger": "\(name)"])
        }
    }

    /// Closes idle ledgers as they pass `idleClose`, and every ledger at shutdown.
    public func run() async throws {
        let every = min(limits.idleClose / 4, limits.idleRelease / 2, .seconds(5))
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: every) }
            closeIdle()
            await releaseIdle()
            if let cluster {
                let (archive, url) = (cluster.archive, cluster.url)
                _ = try? await answered("this node's address", within: .seconds(5)) { try await archive.announce(url: url) }
            }
        }
        await closeAll()
    }

    /// Closes every open ledger and waits until each writer let go.
    public func closeAll() async {
        let closing = state.withLock { state -> [Task<Void, Never>] in
            for name in Array(state.open.keys) { startClosing(name, &state) }
            return Array(state.closing.values)
        }
        for task in closing { await task.value }
    }
}

/// Which folder a path names: its device and inode (nil when there is none). Two folders made
/// one after the other under one name are told apart.
struct FolderIdentity: Equatable, Sendable {
    let device: UInt64?
    let inode: UInt64?

    init(_ path: String) {
        var info = stat()
        if stat(path, &info) == 0 {
            (device, inode) = (UInt64(info.st_dev), UInt64(info.st_ino))
        } else {
            (device, inode) = (nil, nil)
        }
    }
}
