import Foundation
import NIOCore
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
        /// An origin's run the push left out — no signed head within what a receiver takes (a
        /// device's log from before signing) — in words; nil when nothing was.
        public var leftOut: LeftOutRun?

        /// The report as the API and `tally sync --json` show it.
        public var json: JSONText {
            .object(
                [
                    ("pulled", .int(Int64(pulled))), ("pushed", .int(Int64(pushed))), ("alreadyHeld", .int(Int64(alreadyHeld))),
                    ("newConflicts", .int(Int64(newConflicts))), ("newMerges", .int(Int64(newMerges))),
                    ("blobsFetched", .int(Int64(blobsFetched))), ("blobsSent", .int(Int64(blobsSent))),
                ] + (leftOut.map { [("leftOut", .string($0.description))] } ?? []))
        }
    }

    /// Pulls what this replica lacks from `peer`, projects it, then (with `push`) sends what
    /// the peer lacks. The transport only carries bytes: what it fetches is verified and
    /// appended here (`StreamReceiver`), batch by batch, so a pull that fails part-way keeps
    /// what was verified, and the views catch up with it before the error is thrown.
    ///
    /// With `echoingOwnLast`, the pull asks for this replica's own last event too: a peer that
    /// holds another event under that origin and sequence — written by a restored copy of this
    /// replica that wrote as many events as it did — is found (`SyncRejection.forkedOrigin`).
    ///
    /// With `fetchingBlobs` false, attachments' blobs this replica lacks are left on the peer,
    /// to be fetched when wanted (`fetchAttachment`): an app's replica syncs a month of expenses
    /// without a month of photos.
    ///
    /// Blobs of `withholdingBlobs` (ones the peer refused lately for its attachment quota) are
    /// not sent again: each the peer still lacks counts as refused (`PeerAttachmentsOverQuota`).
    public func sync(
        with peer: some ReplicaTransport, push: Bool = true, echoingOwnLast: Bool = false, fetchingBlobs: Bool = true, withholdingBlobs: Set<String> = []
    ) async throws -> SyncReport {
        let before = try views.store.mergeCounts()
        var mine = VersionVector(head: writer.head, excluding: writer.localOnlyOrigin)
        let own = directory.identity.origin
        if echoingOwnLast, mine[own] > 0 { mine.sequences[own] = mine[own] - 1 }
        let pulled: Received
        do {
            pulled = try await verifyAndAppend(from: peer.label) { feed in try await peer.fetch(lacking: mine, into: feed) }
        } catch let failure as ReceiveFailure {
            throw Self.failure(failure.cause, keeping: failure.applied)  // what was verified before the break is kept (and projected)
        }
        do {
            return try await pushAndShareBlobs(
                with: peer, push: push, fetchingBlobs: fetchingBlobs, withholding: withholdingBlobs, after: pulled, mergesBefore: before)
        } catch {
            throw Self.failure(error, keeping: pulled.applied)
        }
    }

    /// `error`, a refusal saying that the sync it ended kept the `count` events it had applied
    /// (`kept`, where it once said "nothing was applied"); any other error as it is, so that
    /// whoever retries still tells a peer out of reach from a log at fault.
    public static func failure(_ error: any Error, keeping count: Int) -> any Error {
        if var left = error as? AttachmentsLeftOverQuota {
            left.kept += count
            return left
        }
        guard var rejection = error as? SyncRejection else { return error }
        rejection.kept += count
        return rejection
    }

    /// `sync(with:)` after its pull: the push, then the blobs both ways, and the report.
    private func pushAndShareBlobs(
        with peer: some ReplicaTransport, push: Bool, fetchingBlobs: Bool, withholding: Set<String>, after pulled: Received,
        mergesBefore before: (conflicts: Int, merges: Int)
    ) async throws -> SyncReport {
        var pushed = 0
        var held = pulled.alreadyHeld
        let leftOut = LeftOutRuns()
        if push {
            let theirs = try await peer.vector()
            if !theirs.covers(vector) {
                let report = try await peer.send(records(lacking: theirs, leftOut: leftOut.note))
                pushed = report.applied
                held += report.alreadyHeld
            }
        }
        // Blobs after the events, so an expense may arrive before its receipt and show it once
        // the blob follows: what the views now reference and this replica lacks, then
        // (pushing) what it holds and the peer lacks.
        let fetched = fetchingBlobs ? try await fetchBlobs(try views.missingAttachments(), from: peer) : FetchedBlobs()
        let sent =
            push
            ? try await sendBlobs(try views.referencedAttachments().filter { try blobs.size(of: $0) != nil }.sorted(), to: peer, withholding: withholding)
            : SentBlobs()
        // A blob refused (its bytes not its name, or past either side's quota) fails the sync
        // only once the others went both ways: it stops no other blob.
        let peerRefused = sent.overQuota.isEmpty ? nil : PeerAttachmentsOverQuota(digests: sent.overQuota, withheld: sent.withheld)
        if var full = fetched.failure as? AttachmentsLeftOverQuota {
            full.peerRefused = peerRefused  // both sides full: the peer's refusal is kept too
            throw full
        }
        if let failure = fetched.failure { throw failure }
        if let peerRefused { throw peerRefused }
        let after = try views.store.mergeCounts()
        return SyncReport(
            pulled: pulled.applied, pushed: pushed, alreadyHeld: held,
            newConflicts: after.conflicts - before.conflicts, newMerges: after.merges - before.merges,
            blobsFetched: fetched.count, blobsSent: sent.sent, leftOut: leftOut.first)
    }

    /// The event records this replica holds and `theirs` lacks (replicated events only), as a
    /// stream of ~1 MiB buffers: what a pull answers and a push sends. An origin's run without
    /// a signed head longer than a receiver takes is left out and handed to `leftOut`
    /// (`recordStream`).
    public func records(lacking theirs: VersionVector, leftOut: @escaping @Sendable (LeftOutRun) -> Void = { _ in }) -> AsyncThrowingStream<
        ByteBuffer, any Error
    > {
        recordStream(from: directory, lacking: theirs, leftOut: leftOut)
    }

    /// Fetches one attachment's blob from `peer` if this replica lacks it (its digest checked);
    /// false when the peer does not hold it either.
    public func fetchAttachment(_ digest: String, from peer: some ReplicaTransport) async throws -> Bool {
        guard try blobs.size(of: digest) == nil else { return true }
        if let failure = try await fetchBlobs([digest], from: peer).failure { throw failure }
        return try blobs.size(of: digest) != nil
    }

    /// What `fetchBlobs` brought, and why it left any it could have had.
    struct FetchedBlobs {
        var count = 0
        /// A refusal: of bytes that are not their name (`SyncRejection`), or of blobs past the
        /// quota (`AttachmentsLeftOverQuota`).
        var failure: (any Error)?
    }

    /// Fetches each blob of `wanted` this replica lacks and `peer` holds. A blob is kept only
    /// once it arrived whole and hashes to its name, so an interrupted transfer is simply
    /// fetched again; one whose bytes are not its name is refused (after the others came).
    ///
    /// Blobs count toward the ledger's `limits.attachmentBytes` as uploads do. A blob that
    /// would pass it is left on the peer — its download given up once it passes the room there
    /// was when the sync began — and the others are still fetched; the blobs left are fetched
    /// by a later sync once there is room.
    func fetchBlobs(_ wanted: [String], from peer: some ReplicaTransport) async throws -> FetchedBlobs {
        var fetched = FetchedBlobs()
        let store = blobs
        var lacking: [String] = []
        for digest in wanted where BlobStore.isDigest(digest) { if try store.size(of: digest) == nil { lacking.append(digest) } }
        guard !lacking.isEmpty else { return fetched }
        let quota = limits.attachmentBytes()
        var room: Int?  // what the quota leaves, counted once (blobs held, or the archive's)
        if let quota {
            let held = try await blocking { try store.totalBytes() }
            room = held < quota ? quota - held : 0  // (a quota.json edited by hand may hold a negative one)
        }
        var leftOverQuota = 0
        for digest in lacking {
            let limit = min(Self.maxReplicatedBlobBytes, room ?? .max)
            let writer = try store.writer(limit: limit)
            defer { writer.abort() }
            do {
                guard try await peer.fetchBlob(digest, into: { try writer.write($0.readableBytesView) }) else { continue }
                // Off the cooperative threads: it fsyncs, and a hosted ledger's archive waits for PostgreSQL.
                let kept = try await blocking { try writer.finish(expecting: digest) }
                room = room.map { $0 - kept.size }
                fetched.count += 1
            } catch let error as BlobError {
                switch error {
                case .overQuota: leftOverQuota += 1
                case .tooLarge where limit < Self.maxReplicatedBlobBytes: leftOverQuota += 1  // past the room left
                default: fetched.failure = SyncRejection(source: "\(peer.label): blob \(digest)", reason: "\(error)")
                }
            }
        }
        if leftOverQuota > 0, let quota { fetched.failure = AttachmentsLeftOverQuota(quota: quota, left: leftOverQuota) }
        return fetched
    }

    /// What `sendBlobs` did.
    struct SentBlobs {
        var sent = 0
        /// Blobs the peer lacks and did not get for its attachment quota: refused now, or withheld.
        var overQuota: [String] = []
        /// How many of `overQuota` were withheld (not sent again).
        var withheld = 0
    }

    /// Sends each blob of `offered` that `peer` says it lacks, but those of `withholding` (the
    /// peer refused them lately: they count as refused without their bytes going again). A blob
    /// the peer refuses for its attachment quota is skipped and the others still sent (a first
    /// version stopped at the first, so one large photo held back every blob sorted after it,
    /// at every sync).
    func sendBlobs(_ offered: [String], to peer: some ReplicaTransport, withholding: Set<String> = []) async throws -> SentBlobs {
        var result = SentBlobs()
        guard !offered.isEmpty else { return result }
        let offeredSet = Set(offered)
        for digest in try await peer.missingBlobs(offered) where offeredSet.contains(digest) {
            guard let size = try blobs.size(of: digest), size <= 1 << 30 else { continue }
            if withholding.contains(digest) {
                result.overQuota.append(digest)
                result.withheld += 1
                continue
            }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: try blobs.file(of: digest)))
            do {
                try await peer.sendBlob(digest, bytes: ByteBuffer(bytes: bytes))
                result.sent += 1
            } catch let error where Self.isOverQuota(error) {
                result.overQuota.append(digest)
            }
        }
        return result
    }

    /// Whether `error` is a peer's refusal of a blob for its attachment quota: its 507 over
    /// HTTP, or its store's own refusal in process.
    static func isOverQuota(_ error: any Error) -> Bool {
        if let rejection = error as? SyncRejection { return rejection.httpStatus == 507 }
        if case .overQuota? = error as? BlobError { return true }
        return false
    }

    /// What this replica and a peer both hold after a sync whose events went both ways: every
    /// origin as it stands (pulled events came from the peer), but this replica's own chain
    /// only as far as it was before the sync began (`ownBefore`) — a write during the sync may
    /// have missed the push, so it counts as not yet sent — and an origin's run the push left
    /// out (`SyncReport.leftOut`) only up to where the run began.
    public func heldAfterSync(ownBefore: UInt64, leftOut: LeftOutRun? = nil) -> VersionVector {
        var held = vector
        held.sequences[directory.identity.origin] = ownBefore
        if let run = leftOut { held.sequences[run.origin] = min(held[run.origin], max(run.from, 1) - 1) }
        return held
    }

    /// Syncs with a configured peer (`sync(with:)` over HTTP, not sending `withholdingBlobs`)
    /// and records how it went in `PeerStatusStore`, for the sync status a person sees.
    public func sync(withPeer peer: Peer, withholdingBlobs: Set<String> = []) async throws -> SyncReport {
        let statuses = PeerStatusStore(directory: directory)
        let started = Date(), ownBefore = vector[directory.identity.origin]
        do {
            let report = try await sync(with: ReplicaClient(baseURL: peer.url, token: peer.token, label: peer.name), withholdingBlobs: withholdingBlobs)
            try? statuses.record(peer.name, at: started) { status in
                status.lastError = nil
                status.lastSuccessAt = status.lastAttemptAt
                (status.pulled, status.pushed, status.vectorAtSuccess) = (
                    report.pulled, report.pushed, heldAfterSync(ownBefore: ownBefore, leftOut: report.leftOut)
                )
            }
            return report
        } catch let quota as any AttachmentQuotaEnding {
            // The events went both ways; only attachments stayed, for a quota (the peer's is
            // said as the peer's): what the peer holds counts as sent.
            let reason = quota is PeerAttachmentsOverQuota ? "\(peer.name): \(quota)" : "\(quota)"
            try? statuses.record(peer.name, at: started) { status in
                (status.lastError, status.vectorAtSuccess) = (reason, heldAfterSync(ownBefore: ownBefore))
            }
            throw quota
        } catch {
            // A refusal names what this replica refused; anything else is the peer's failure,
            // whose words (a decoding error quotes them) are not kept.
            let reason = error is SyncRejection ? "\(error)" : ReplicaClient.failureInWords(error) ?? "this replica failed: \(error)"
            try? statuses.record(peer.name, at: started) { $0.lastError = reason }
            throw error
        }
    }

    /// Imports the bundle in `folder` (all or nothing: `SegmentBundle` verifies every file,
    /// frame, chain and field rule first) and projects it.
    public func importBundle(from folder: String) async throws -> SyncReport {
        let before = try views.store.mergeCounts()
        let report = try await deliveries.run {
            var report: SegmentBundle.ImportReport
            do {
                report = try await blocking { [writer, maximumSkewMillis] in
                    try SegmentBundle.importBundle(from: folder, into: writer, maximumSkewMillis: maximumSkewMillis)
                }
            } catch {
                try projector.catchUp()
                throw error
            }
            try projectDelivery(report.folded.take())
            return report
        }
        let after = try views.store.mergeCounts()
        return SyncReport(
            pulled: report.applied, pushed: 0, alreadyHeld: report.alreadyHeld,
            newConflicts: after.conflicts - before.conflicts, newMerges: after.merges - before.merges)
    }

    /// Receives a peer's pushed stream of event records: verified and appended batch by batch
    /// as it arrives, then projected. On a bad event, its batch and everything after it are
    /// refused; earlier batches stay (each was valid, and the peer need not send it again).
    /// `admit`, if given, decides who may bring each new event (a member's push: only their own).
    public func receive(
        _ pieces: some AsyncSequence<ByteBuffer, any Error>, from source: String, admit: (@Sendable (Event) -> String?)? = nil
    ) async throws -> (applied: Int, alreadyHeld: Int) {
        let received = try await verifyAndAppend(from: source, admit: admit) { feed in
            for try await piece in pieces { try feed(piece) }
        }
        return (received.applied, received.alreadyHeld)
    }

    /// What `verifyAndAppend` took in.
    struct Received {
        var applied: Int
        var alreadyHeld: Int
    }

    /// The one way events from outside get in: `deliver` hands over pieces of an event-record
    /// stream, each fed to a `StreamReceiver` (verified, appended in durable batches); then
    /// the views catch up. A delivery that breaks off keeps what was verified before the
    /// break and throws `ReceiveFailure`, naming how much was applied.
    func verifyAndAppend(
        from source: String, admit: (@Sendable (Event) -> String?)? = nil, _ deliver: (_ feed: (ByteBuffer) throws -> Void) async throws -> Void
    ) async throws -> Received {
        try await deliveries.run {
            var receiver = try StreamReceiver(
                writer: writer, source: source, maximumSkewMillis: maximumSkewMillis, foldingBulksFrom: Int(clamping: projector.freshGenerationFrom),
                admit: admit)
            do {
                try await deliver { try receiver.feed($0.readableBytesView) }
                try receiver.finish()
            } catch {
                receiver.stop()  // a dropped connection keeps what was verified before the break
                try projector.catchUp()
                throw ReceiveFailure(applied: receiver.applied, cause: error)
            }
            try projectDelivery(receiver.takeFolded())
            return Received(applied: receiver.applied, alreadyHeld: receiver.alreadyHeld)
        }
    }

    /// Brings the views up to a delivery just appended, as a bulk (`Projector.catchUpInBulk`:
    /// a delivery that outnumbers what the views show is loaded as a new generation), or as a
    /// first load — each from `folded` when the receiver kept the log folded on the way in.
    private func projectDelivery(_ folded: consuming FoldedLog?) throws {
        let intoEmptyViews = try projector.checkpoint() == 0
        guard let folded = consume folded else {
            try projector.catchUpInBulk(through: writer.head.lastIndex)
            return
        }
        if intoEmptyViews {
            try projector.catchUp(startingFrom: folded)
        } else {
            try projector.catchUpInBulk(through: writer.head.lastIndex, startingFrom: folded)
        }
    }
}

/// A push that failed part-way: how many events of it were applied before the failure.
public struct ReceiveFailure: Error, Sendable, CustomStringConvertible {
    public let applied: Int
    public let cause: any Error
    public var description: String { applied > 0 ? "\(cause) (the \(applied) events received before it were kept)" : "\(cause)" }
}
