import Foundation
import TallyCore
import TallyLog
import TallyStore
import TallySync

/// Replication (DESIGN.md §7): whatever the transport, events from outside pass
/// `IncomingEvents` (chains, sequences, clock, field rules) before they are appended, and the
/// views catch up right after — written once here for bundles, pushes and syncs.
extension Ledger {
    /// What a sync did.
    public struct SyncReport: Sendable {
        public var pulled: Int
        public var pushed: Int
        public var alreadyHeld: Int
        /// New conflicts journaled and category merges made by what was pulled.
        public var newConflicts: Int
        public var newMerges: Int
        /// Attachments' blobs fetched from and sent to the peer (HTTP; a bundle's come with its events).
        public var blobsFetched = 0
        public var blobsSent = 0

        /// The report as the API and `tally sync --json` show it.
        public var json: JSONText {
            .object([
                ("pulled", .int(Int64(pulled))), ("pushed", .int(Int64(pushed))), ("alreadyHeld", .int(Int64(alreadyHeld))),
                ("newConflicts", .int(Int64(newConflicts))), ("newMerges", .int(Int64(newMerges))),
                ("blobsFetched", .int(Int64(blobsFetched))), ("blobsSent", .int(Int64(blobsSent))),
            ])
        }
    }

    /// Pulls what this replica lacks from `peer`, projects it, then (with `push`) sends what
    /// the peer lacks. A pull that fails part-way keeps what was verified and appended, and the
    /// views catch up with it before the error is thrown.
    public func sync(with peer: some ReplicaTransport, push: Bool = true) async throws -> SyncReport {
        let before = try views.store.mergeCounts()
        let pulled: PullReport
        do {
            pulled = try await peer.pull(into: writer, maximumSkewMillis: maximumSkewMillis)
        } catch {
            try projector.catchUp()
            throw error
        }
        var folded = pulled.folded
        try projector.catchUp(startingFrom: folded.take())
        var pushed = 0
        var held = pulled.alreadyHeld
        if push {
            let theirs = try await peer.vector()
            if !theirs.covers(vector) {
                let report = try await peer.push(from: directory, theirs: theirs)
                pushed = report.applied
                held += report.alreadyHeld
            }
        }
        // Blobs after the events: what the views now reference and this replica lacks, then
        // (pushing) what it holds and the peer lacks.
        let fetched = try await peer.fetchBlobs(try views.missingAttachments(), into: blobs, limit: Self.maxReplicatedBlobBytes)
        let sent = push ? try await peer.sendBlobs(try views.referencedAttachments().filter { try blobs.size(of: $0) != nil }.sorted(), from: blobs) : 0
        let after = try views.store.mergeCounts()
        return SyncReport(
            pulled: pulled.applied, pushed: pushed, alreadyHeld: held,
            newConflicts: after.conflicts - before.conflicts, newMerges: after.merges - before.merges,
            blobsFetched: fetched, blobsSent: sent)
    }

    /// Syncs with a configured peer (`sync(with:)` over HTTP) and records how it went in
    /// `PeerStatusStore`, for the sync status a person sees.
    public func sync(withPeer peer: Peer) async throws -> SyncReport {
        let statuses = PeerStatusStore(directory: directory)
        let started = Date(), ownBefore = vector[directory.identity.origin]
        do {
            let report = try await sync(with: ReplicaClient(baseURL: peer.url, token: peer.token, label: peer.name))
            // What both now hold: every origin as it stands (pulled events came from the peer),
            // but this replica's own chain only as far as it was before the sync began — a
            // write during the sync may have missed the push, so it counts as not yet sent.
            var held = vector
            held.sequences[directory.identity.origin] = ownBefore
            try? statuses.record(peer.name, at: started) { status in
                status.lastError = nil
                status.lastSuccessAt = status.lastAttemptAt
                (status.pulled, status.pushed, status.vectorAtSuccess) = (report.pulled, report.pushed, held)
            }
            return report
        } catch {
            // A refusal names what this replica refused; anything else is the peer's failure,
            // whose words (a decoding error quotes them) are not kept.
            let reason = error is SyncRejection || error is LogError ? "\(error)" : "it could not be reached, or did not answer as a Tally replica"
            try? statuses.record(peer.name, at: started) { $0.lastError = reason }
            throw error
        }
    }

    /// Imports the bundle in `folder` (all or nothing) and projects it.
    public func importBundle(from folder: String) async throws -> SyncReport {
        try await sync(with: BundleFolder(path: folder), push: false)
    }

    /// Receives a peer's pushed stream of event records: verified and appended batch by batch
    /// as it arrives, then projected. On a bad event, its batch and everything after it are
    /// refused; earlier batches stay (each was valid, and the peer need not send it again).
    public func receive(_ pieces: some AsyncSequence<some Collection<UInt8>, any Error>, from source: String)
        async throws -> (applied: Int, alreadyHeld: Int)
    {
        var receiver = try StreamReceiver(writer: writer, source: source, maximumSkewMillis: maximumSkewMillis)
        var failure: (any Error)?
        do {
            for try await piece in pieces { try receiver.feed(piece) }
            try receiver.finish()
        } catch {
            failure = error
            receiver.stop()  // a dropped connection keeps what was verified before the break
        }
        try projector.catchUp()
        if let failure { throw ReceiveFailure(applied: receiver.applied, cause: failure) }
        return (receiver.applied, receiver.alreadyHeld)
    }
}

/// A push that failed part-way: how many events of it were applied before the failure.
public struct ReceiveFailure: Error, Sendable, CustomStringConvertible {
    public let applied: Int
    public let cause: any Error
    public var description: String { applied > 0 ? "\(cause) (\(applied) events of earlier, complete batches were applied)" : "\(cause)" }
}
