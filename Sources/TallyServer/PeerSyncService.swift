import Foundation
import Logging
import ServiceLifecycle
import TallyCore
import TallyLedger
import TallyLog
import TallySync

/// Syncs with every configured peer every `interval`, backing off (doubling, up to 30 min)
/// while a peer is unreachable or refuses. Stops with the service.
struct PeerSyncService: Service {
    let service: TallyService
    let interval: Duration

    func run() async throws {
        var backoff: [String: (until: ContinuousClock.Instant, delay: Duration)] = [:]
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            for peer in (try? PeerStore(directory: service.directory).all()) ?? [] {
                if let wait = backoff[peer.name], ContinuousClock.now < wait.until { continue }
                do {
                    let report = try await service.ledger.sync(withPeer: peer)
                    backoff[peer.name] = nil
                    service.metrics.replicated(report.pulled, from: peer.name)
                    if report.pulled + report.pushed > 0 {
                        service.logger.info("synced", metadata: ["peer.id": "\(peer.name)", "events.pulled": "\(report.pulled)", "events.pushed": "\(report.pushed)"])
                    }
                } catch {
                    let delay = min((backoff[peer.name]?.delay ?? interval) * 2, .seconds(1800))
                    backoff[peer.name] = (ContinuousClock.now + delay, delay)
                    service.logger.warning("sync failed; backing off", metadata: ["peer.id": "\(peer.name)", "error": "\(error is SyncRejection || error is LogError ? "\(error)" : "\(type(of: error))")", "retry.seconds": "\(delay.components.seconds)"])
                }
            }
            // Wakes at once when the service shuts down, rather than after the interval.
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}

/// The attachments' retention while the service runs: `AttachmentCollector` once an hour
/// (the first time an hour after start), as `tally attachments gc` does by hand.
struct AttachmentRetentionService: Service {
    let service: TallyService
    let interval: Duration

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            if Task.isShuttingDownGracefully || Task.isCancelled { return }
            do {
                let report = try await service.run { try AttachmentCollector(directory: service.directory).run(views: service.views, dryRun: false) }
                if !report.removed.isEmpty {
                    service.logger.info("attachments collected", metadata: ["blobs.removed": "\(report.removed.count)", "blobs.waiting": "\(report.waiting)"])
                }
            } catch {
                service.logger.warning("attachment retention failed", metadata: ["error": "\(error)"])
            }
        }
    }
}

/// Recurring rules' occurrences while the service runs: at start, then every `interval` when
/// the hour has changed (a rule's day changes at its own offset's midnight, which falls within
/// some UTC hour) or the views have taken new events (a sync or an import may have brought
/// rules), as `tally recurring run` does by hand.
struct RecurrenceService: Service {
    let service: TallyService
    let interval: Duration

    func run() async throws {
        var last: (hour: Int64, index: UInt64)?
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                // The index is read before the pass: events that arrive during it get another.
                let now = (hour: DateTime.nowHere.epochMillis / 3_600_000, index: try await service.run { try service.views.projectedIndex() })
                if last.map({ $0.hour != now.hour || $0.index != now.index }) ?? true {
                    let created = try await service.run { try service.ledger.materializeRecurrences() }
                    if created > 0 { service.logger.info("recurring occurrences created", metadata: ["events.count": "\(created)"]) }
                    // Its own writes moved the index: counted as seen, not as news.
                    last = (now.hour, created > 0 ? try await service.run { try service.views.projectedIndex() } : now.index)
                }
            } catch {
                service.logger.warning("recurring occurrences failed", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}

/// Copies the views for as-of reads when `policy` says one is due, checking every `interval`
/// (the copy is one read transaction: writes go on meanwhile).
struct SnapshotService: Service {
    let service: TallyService
    let policy: SnapshotPolicy
    let interval: Duration

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                if let taken = try await service.run({ [policy] in try service.views.takeSnapshot(policy) }) {
                    service.logger.info("views snapshot taken", metadata: ["log.index": "\(taken.index)", "bytes": "\(taken.bytes)"])
                }
            } catch {
                service.logger.warning("views snapshot failed", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}
