import Foundation
import Logging
import ServiceLifecycle
import TallyCore
import TallyLog
import TallySync

/// How often an open ledger does its own work.
public struct BackgroundSchedule: Sendable {
    /// A sync with every configured peer (`tally serve --sync-interval`).
    public var peerSync: Duration = .seconds(30)
    /// The attachments' retention (`AttachmentCollector`, as `tally attachments gc`).
    public var attachmentRetention: Duration = .seconds(3600)
    /// A check for recurring occurrences that have come due.
    public var recurrence: Duration = .seconds(60)
    /// A check whether a snapshot of the views is due, and how often one is (`SnapshotPolicy`).
    public var snapshotCheck: Duration = .seconds(10)
    public var snapshots = SnapshotPolicy()

    public init(peerSync: Duration = .seconds(30), snapshots: SnapshotPolicy = SnapshotPolicy()) {
        (self.peerSync, self.snapshots) = (peerSync, snapshots)
    }
}

/// The work an open ledger does by itself, whoever opened it (the service, a test, an app):
/// recurring occurrences as they come due, snapshots of the views for as-of reads, the
/// attachments' retention, and a sync with each configured peer. A swift-service-lifecycle
/// `Service`: run it in the host's `ServiceGroup`, and it stops at graceful shutdown. Each
/// round's blocking part runs on the `BlockingThreads`.
public struct LedgerBackgroundWork: Service {
    let ledger: Ledger
    let schedule: BackgroundSchedule
    let logger: Logger
    /// Hears of each peer sync that succeeded (the service counts replicated events).
    let synced: @Sendable (_ peer: String, Ledger.SyncReport) -> Void

    public func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await syncPeers() }
            group.addTask { await retainAttachments() }
            group.addTask { await materializeRecurrences() }
            group.addTask { await takeSnapshots() }
            group.addTask { await fetchArchivedAttachments() }
        }
    }

    /// Once, at open, on a hosted ledger's node of a cluster: the attachments it lacks, from
    /// the cluster's archive (`Ledger.fetchMissingAttachmentsFromArchive`).
    private func fetchArchivedAttachments() async {
        guard ledger.archive != nil else { return }
        do {
            let ledger = ledger
            let fetched = try await ledger.blocking { try ledger.fetchMissingAttachmentsFromArchive() }
            if fetched > 0 { logger.info("brought attachments from the cluster", metadata: ["blobs.fetched": "\(fetched)"]) }
        } catch {
            warn("bringing attachments from the cluster failed", error)
        }
    }

    /// Logs a round that failed, unless the ledger closed under it: its work was cancelled, and
    /// nothing failed.
    private func warn(_ message: Logger.Message, _ error: any Error) {
        guard !(error is CancellationError) else { return }
        logger.warning(message, metadata: ["error": "\(error)"])
    }

    /// Sleeps `interval`, waking at once at shutdown; false once shutting down.
    private func pause(_ interval: Duration) async -> Bool {
        try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        return !Task.isShuttingDownGracefully && !Task.isCancelled
    }

    /// Every `schedule.peerSync`, a sync with each configured peer (`PeerSyncRounds`).
    private func syncPeers() async {
        var rounds = PeerSyncRounds(interval: schedule.peerSync)
        let told = OncePerHour()  // each round would say a run left out again
        repeat {
            for peer in (try? PeerStore(directory: ledger.directory).all()) ?? [] {
                switch await rounds.sync(ledger, with: peer) {
                case nil: continue  // backing off
                case .success(let report):
                    synced(peer.name, report)
                    if let run = report.leftOut, told.isFirstWithinTheHour(peer.name + " \(run.origin)") {
                        logger.warning("sync: events left out of the push", metadata: ["peer.id": "\(peer.name)", "reason": "\(run)"])
                    }
                    if report.pulled + report.pushed > 0 {
                        logger.info("synced", metadata: ["peer.id": "\(peer.name)", "events.pulled": "\(report.pulled)", "events.pushed": "\(report.pushed)"])
                    }
                case .failure(let error as any AttachmentQuotaEnding):
                    logger.warning("sync: attachments held back by a quota", metadata: ["peer.id": "\(peer.name)", "error": "\(error)"])
                case .failure(let error):
                    logger.warning(
                        "sync failed; backing off",
                        metadata: [
                            "peer.id": "\(peer.name)", "error": "\(error is SyncRejection || error is LogError ? "\(error)" : "\(type(of: error))")",
                            "retry.seconds": "\(rounds.backoff[peer.name]?.delay.components.seconds ?? 0)",
                        ])
                }
            }
        } while await pause(schedule.peerSync)
    }

    /// The attachments' retention every `schedule.attachmentRetention`, the first time one
    /// interval after start.
    private func retainAttachments() async {
        while await pause(schedule.attachmentRetention) {
            do {
                let ledger = ledger
                let report = try await ledger.blocking { try AttachmentCollector(ledger.blobs).run(views: ledger.views, dryRun: false) }
                if !report.removed.isEmpty {
                    logger.info("attachments collected", metadata: ["blobs.removed": "\(report.removed.count)", "blobs.waiting": "\(report.waiting)"])
                }
            } catch {
                warn("attachment retention failed", error)
            }
        }
    }

    /// Recurring rules' occurrences: at start, then every `schedule.recurrence` when the hour
    /// has changed (a rule's day changes at its own offset's midnight, which falls within some
    /// UTC hour) or the views have taken new events (a sync or an import may have brought
    /// rules), as `tally recurring run` does by hand.
    private func materializeRecurrences() async {
        let ledger = ledger
        var last: (hour: Int64, index: UInt64)?
        repeat {
            do {
                // The index is read before the pass: events that arrive during it get another.
                let now = (hour: DateTime.nowHere.epochMillis / 3_600_000, index: ledger.projectedIndex)
                if last.map({ $0.hour != now.hour || $0.index != now.index }) ?? true {
                    let created = try await ledger.materializeRecurrences()
                    if created > 0 { logger.info("recurring occurrences created", metadata: ["events.count": "\(created)"]) }
                    // Its own writes moved the index: counted as seen, not as news.
                    last = (now.hour, created > 0 ? ledger.projectedIndex : now.index)
                }
            } catch {
                warn("recurring occurrences failed", error)
            }
        } while await pause(schedule.recurrence)
    }

    /// A copy of the views for as-of reads when `schedule.snapshots` says one is due, checked
    /// every `schedule.snapshotCheck` (the copy is one read transaction: writes go on meanwhile).
    private func takeSnapshots() async {
        let (ledger, policy) = (ledger, schedule.snapshots)
        repeat {
            do {
                if let taken = try await ledger.blocking({ try ledger.takeSnapshotIfDue(policy) }) {
                    logger.info("views snapshot taken", metadata: ["log.index": "\(taken.index)", "bytes": "\(taken.bytes)"])
                }
            } catch {
                warn("views snapshot failed", error)
            }
        } while await pause(schedule.snapshotCheck)
    }
}

extension Ledger {
    /// This ledger's own background work (`LedgerBackgroundWork`), to run while it is open.
    /// `synced` hears of each successful peer sync.
    public func backgroundWork(
        _ schedule: BackgroundSchedule = BackgroundSchedule(), logger: Logger,
        synced: @escaping @Sendable (_ peer: String, SyncReport) -> Void = { _, _ in }
    ) -> LedgerBackgroundWork {
        LedgerBackgroundWork(ledger: self, schedule: schedule, logger: logger, synced: synced)
    }
}

/// What a service's syncs with its peers remember from round to round: a peer that failed is
/// backed off (doubling from the interval, up to 30 min), and the blobs a peer refused for its
/// attachment quota are not sent to it again within the hour (`RefusedBlobs`). Such a refusal,
/// or blobs left on the peer for this ledger's own quota, comes after the events went both
/// ways, so it backs nothing off: the events keep flowing
/// every round (a first version backed off there too, so a peer at its quota got this
/// ledger's events every 30 minutes, and the refused blobs again each time).
struct PeerSyncRounds {
    let interval: Duration
    private(set) var backoff: [String: (until: ContinuousClock.Instant, delay: Duration)] = [:]
    private(set) var refusedBlobs: [String: RefusedBlobs] = [:]

    init(interval: Duration) { self.interval = interval }

    /// Syncs `ledger` with `peer`, unless it is backing off (nil).
    mutating func sync(_ ledger: Ledger, with peer: Peer) async -> Result<Ledger.SyncReport, any Error>? {
        if let wait = backoff[peer.name], ContinuousClock.now < wait.until { return nil }
        let refused = refusedBlobs[peer.name] ?? RefusedBlobs()
        do {
            let report = try await ledger.sync(withPeer: peer, withholdingBlobs: refused.withheld())
            (backoff[peer.name], refusedBlobs[peer.name]) = (nil, nil)
            return .success(report)
        } catch let quota as any AttachmentQuotaEnding {
            backoff[peer.name] = nil
            refusedBlobs[peer.name] = refused.after(quota.peerRefusal)
            return .failure(quota)
        } catch {
            let delay = min((backoff[peer.name]?.delay ?? interval) * 2, .seconds(1800))
            backoff[peer.name] = (ContinuousClock.now + delay, delay)
            return .failure(error)
        }
    }
}
