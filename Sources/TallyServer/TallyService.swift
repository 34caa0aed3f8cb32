import Foundation
import Logging
import NIOPosix
import TallyCore
import TallyImages
import TallyLog
import TallyLedger
import TallyStore

/// What the HTTP service runs on: the replica's `Ledger` (its writer held for the service's
/// lifetime, so a CLI writer waits or fails clearly) and its tokens. Blocking work (fsync,
/// SQLite) runs on the process's `BlockingThreads`.
public final class TallyService: Sendable {
    /// The one gate for writes, queries and replication.
    public let ledger: Ledger
    public var directory: DataDirectory { ledger.directory }
    public var views: LedgerViews { ledger.views }
    public let tokens: TokenStore
    /// The household's members, their sessions and invitations.
    public let members: MemberStore
    /// What the ledger may use (`quota.json`) and has used.
    public let usage: QuotaUsage

    /// The most bytes all attachments may hold: the server's quota, or the ledger's if smaller —
    /// uploads and the blobs a sync fetches from a peer alike (`LedgerLimits.attachmentBytes`).
    static func attachmentQuota(server: Int?, ledger: LedgerQuota) -> Int? {
        guard let ledgers = ledger.attachmentBytes else { return server }
        return min(server ?? .max, ledgers)
    }
    /// Request and replication counters for `/metrics`.
    public let metrics = Metrics()
    /// Change feeds one token may hold open at once (429 beyond): a leaked client loop cannot
    /// tie up the service's threads and file descriptors.
    public let maxStreamsPerToken: Int
    /// How long a request body may take to arrive (408 beyond).
    public let bodyTimeout: Duration
    /// How big an attachment may be, which types are taken, and the quota of all of them.
    public let attachmentLimits: AttachmentLimits
    let openStreams = OpenStreams()
    /// Runs a pull's answer left out, each told to the log at most once an hour.
    let leftOutRuns = OncePerHour()
    /// Thumbnails, made a bounded number at a time (`AttachmentLimits.thumbnails`).
    public let thumbnails: ThumbnailQueue

    /// How many change feeds the token named `name` holds open now (for `/metrics` and tests).
    public func openChangeFeeds(token name: String) throws -> Int {
        guard let record = try tokens.all().first(where: { $0.name == name }) else { return 0 }
        return openStreams.count(for: record.sha256)
    }
    public let logger: Logger

    /// Opens the replica: takes the writer lock, migrates and catches up the views.
    public init(
        directory: DataDirectory, logger: Logger, lockTimeout: Double = 0, maxStreamsPerToken: Int = 4,
        bodyTimeout: Duration = .seconds(30), attachmentLimits: AttachmentLimits = AttachmentLimits(), thumbnails: ThumbnailQueue? = nil,
        bcryptCost: UInt8 = 12, viewConnections: ViewConnections = ViewConnections(), archive: (any LedgerArchive)? = nil,
        threadsAtOnce: Int = BlockingThreads.count
    ) throws {
        self.logger = logger
        let usage = QuotaUsage(file: QuotaFile(try LedgerQuota.read(folder: directory.path), folder: directory.path))
        let serverQuota = attachmentLimits.quota
        self.usage = usage
        self.attachmentLimits = attachmentLimits
        self.bodyTimeout = bodyTimeout
        self.maxStreamsPerToken = maxStreamsPerToken
        ledger = try Ledger(
            directory: directory, lockTimeout: lockTimeout, viewConnections: viewConnections, archive: archive,
            limits: LedgerLimits(attachmentBytes: { Self.attachmentQuota(server: serverQuota, ledger: usage.quota) }, threadsAtOnce: threadsAtOnce))
        // A day new to the ledger starts where the log stands now: what opening brought (a
        // catch-up from the cluster's archive) is not today's writes.
        _ = usage.eventsToday(appendedIndex: ledger.appendedIndex)
        if let torn = ledger.opening.tornTail { logger.warning("cut a torn tail on open", metadata: ["log.tail": "\(torn)"]) }
        logger.info("views caught up", metadata: ["events.applied": "\(ledger.opening.caughtUp)"])
        tokens = TokenStore(directory: directory)
        members = MemberStore(directory: directory, cost: bcryptCost)
        self.thumbnails = thumbnails ?? Self.thumbnailQueue(attachmentLimits)
    }

    /// A queue of thumbnail decodes within `limits` (hosted ledgers share one: the bound on
    /// decodes at once is the process's, not each ledger's).
    public static func thumbnailQueue(_ limits: AttachmentLimits) -> ThumbnailQueue {
        ThumbnailQueue(limits: limits.thumbnails) { work in try await BlockingThreads.run { try work() } }
    }

    /// Runs blocking work on the `BlockingThreads`, in the ledger's share of them.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await ledger.blocking(body)
    }

    /// Waits for in-flight appends and releases the writer lock.
    public func close() { ledger.close() }

    /// Gives back what idle connections to the views hold (`Ledger.releaseMemory`).
    public func releaseMemory() { ledger.releaseMemory() }
}

extension TallyService {
    /// The services to run beside the HTTP server: the ledger's own background work
    /// (`LedgerBackgroundWork`), its peer syncs counted in `/metrics`.
    public func backgroundServices(_ schedule: BackgroundSchedule = BackgroundSchedule()) -> [any Service] {
        [ledger.backgroundWork(schedule, logger: logger) { [metrics] peer, report in metrics.replicated(report.pulled, from: peer) }]
    }
}

import ServiceLifecycle

/// What attachments the service takes (`tally serve --max-attachment-mib`, `--attachment-quota-mib`,
/// `--allow-any-attachment-type`).
public struct AttachmentLimits: Sendable {
    /// The most bytes one attachment may hold (413 beyond, checked as it arrives): 25 MiB.
    public var maxBytes: Int
    /// The most bytes all of this ledger's attachments may hold (507 beyond): 10 GiB.
    public var quota: Int?
    /// The types taken, told from the bytes (415 otherwise).
    public var allowedTypes: [String] = AttachmentType.known
    /// Take any bytes, stored as application/octet-stream when no known type matches.
    public var allowOtherTypes = false
    /// How long an upload may take to arrive (408 beyond).
    public var uploadTimeout: Duration = .seconds(300)
    /// What making thumbnails may cost (memory per decode, decodes at once, time).
    public var thumbnails = ThumbnailLimits()

    public init(maxBytes: Int = 25 << 20, quota: Int? = 10 << 30, allowOtherTypes: Bool = false) {
        (self.maxBytes, self.quota, self.allowOtherTypes) = (maxBytes, quota, allowOtherTypes)
    }
}
