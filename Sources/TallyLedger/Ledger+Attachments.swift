import Foundation
import TallyCore
import TallyLog
import TallyStore

/// Attachments (docs/ATTACHMENTS.md): the blob store of this replica, and the rule that a local
/// write may only reference attachments this replica holds (a digest nobody uploaded is a typo
/// or a lost upload; events from peers may reference blobs that have not arrived yet).
extension Ledger {
    /// This replica's blobs. `package`: the service streams uploads into it and serves files
    /// from it; an app embedding the ledger goes through the attachment operations.
    package var blobs: BlobStore { BlobStore(directory: directory, archive: archive, quota: limits.attachmentBytes) }

    /// The largest blob a sync takes from a peer (a peer's own limit may be set up to 4 GiB).
    static let maxReplicatedBlobBytes = 4 << 30

    /// The size of the blob `digest`, or nil if this replica holds none — on a hosted ledger's
    /// node, after bringing it from the cluster's archive if only the archive holds it (the node
    /// that took the upload may be gone).
    package func heldSize(ofBlob digest: String) async throws -> Int? {
        let blobs = blobs
        if let size = try blobs.size(of: digest) { return size }
        guard blobs.archive != nil else { return nil }
        return try await blocking { try blobs.fetch(digest) }
    }

    /// Which of `digests` this replica lacks (what a peer asks before it sends blobs). On a
    /// hosted ledger's node a blob the cluster's archive holds is not lacking: the node brings
    /// it when it is asked for, so a peer need not send it again. One question to the archive,
    /// asked only if the node lacks any.
    package func missingBlobs(among digests: [String]) async throws -> [String] {
        let blobs = blobs
        return try await blocking {
            // Those held are touched, as an upload would touch them: the peer is told not to send
            // them, and retention, which looks at them again under its lock, keeps them.
            let lacking = try blobs.whileRetentionWaits {
                try digests.filter { digest in
                    guard try blobs.size(of: digest) != nil else { return true }
                    utimes(try blobs.file(of: digest), nil)
                    return false
                }
            }
            guard !lacking.isEmpty, let archive = blobs.archive else { return lacking }
            let archived = try archive.held(among: lacking)
            return lacking.filter { !archived.contains($0) }
        }
    }

    /// On a hosted ledger's node: every attachment the views reference and this node lacks,
    /// brought from the cluster's archive (a node that took the ledger over holds none of them),
    /// so that they show as held and download at once. Returns how many came. Blocks.
    func fetchMissingAttachmentsFromArchive() throws -> Int {
        guard archive != nil else { return 0 }
        let blobs = blobs
        return try views.missingAttachments().reduce(0) { fetched, digest in fetched + (try blobs.fetch(digest) != nil ? 1 : 0) }
    }

    /// Throws if `properties` attach a digest this replica holds no blob of (a hosted ledger's
    /// node brings one its archive holds first).
    func checkAttachmentsHeld(_ properties: PropertyMap) async throws {
        guard case .strings(let digests)? = properties[.attachments] else { return }
        let blobs = blobs
        for digest in digests {
            _ = try await heldSize(ofBlob: digest)  // brought from the archive, if only it holds it
            let held = try await blocking {
                try blobs.whileRetentionWaits {
                    guard try blobs.size(of: digest) != nil else { return false }
                    utimes(try blobs.file(of: digest), nil)  // attached now: retention (gc) starts over for it
                    try blobs.ensureArchived(digest)
                    return true
                }
            }
            guard held else {
                throw ValidationError(
                    field: "attachments", "no attachment \(digest) on this replica; upload it first (POST /v1/attachments, or tally attachment add)",
                    kind: .conflictsWithState)
            }
        }
    }
}

extension LedgerViews {
    /// Every attachment a live expense or to-do references.
    public func referencedAttachments() throws -> Set<String> {
        try store.referencedAttachments()
    }

    /// Attachments referenced by live entities that this replica does not hold (yet): sent by
    /// a peer whose blobs have not arrived, to be fetched by the next sync.
    public func missingAttachments() throws -> [String] {
        let blobs = BlobStore(directory: directory)
        return try referencedAttachments().filter { try blobs.size(of: $0) == nil }.sorted()
    }
}

/// Retention of attachments (`tally attachments gc`, and the running service every hour): a
/// blob no live expense or to-do references — its expense deleted, the attachment removed —
/// is kept for `retention` (30 days by default, so an edit from another replica that brings it
/// back still finds it), counted from when gc first saw it unreferenced and from its last
/// upload, then deleted with its thumbnails. The audit history still names its digest.
public struct AttachmentCollector: Sendable {
    /// The blobs it collects (with a hosted ledger's archive, from which they go first).
    public let store: BlobStore
    public let retention: TimeInterval

    public static let defaultRetention: TimeInterval = 30 * 86_400

    public init(_ store: BlobStore, retention: TimeInterval = AttachmentCollector.defaultRetention) {
        (self.store, self.retention) = (store, retention)
    }

    /// What a run found.
    public struct Report: Sendable {
        /// Deleted (with `dryRun`: would be deleted).
        public var removed: [BlobInfo] = []
        /// Unreferenced, waiting out the retention period.
        public var waiting = 0
        /// Referenced (thumbnails of referenced photos included).
        public var kept = 0
    }

    /// Runs once against the views as `views` shows them.
    public func run(views: LedgerViews, dryRun: Bool, now: Date = Date()) throws -> Report {
        let live = try liveBlobs(views)
        let ledger = SecretFile<[String: Date]>(path: store.path + "/unreferenced.json", empty: [:])
        var report = Report()
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: true)
        let expired: [BlobInfo] = try ledger.update { since in
            var expired: [BlobInfo] = []
            var seen: [String: Date] = [:]
            // A hosted ledger's archive may hold blobs this node never fetched.
            let local = try store.all()
            let held = Set(local.map(\.digest))
            let archivedOnly = try store.archive?.blobs().filter { !held.contains($0.digest) } ?? []
            for blob in local + archivedOnly {
                if live.contains(blob.digest) { report.kept += 1; continue }
                let first = since[blob.digest] ?? now
                seen[blob.digest] = first
                if now.timeIntervalSince(first) >= retention, now.timeIntervalSince(lastUpload(blob.digest, store)) >= retention {
                    expired.append(blob)
                } else {
                    report.waiting += 1
                }
            }
            if !dryRun { for blob in expired { seen[blob.digest] = nil } }
            since = seen
            return expired
        }
        report.removed = expired
        guard !dryRun else { return report }
        // Looked at again and removed while nothing relies on a held blob
        // (`whileRetentionRemoves`): one referenced since (an edit from a peer), uploaded,
        // attached or asked for by a peer again since (its time touched) is kept.
        report.removed = try store.whileRetentionRemoves {
            let liveNow = try liveBlobs(views)
            return try expired.filter { blob in
                guard !liveNow.contains(blob.digest), now.timeIntervalSince(lastUpload(blob.digest, store)) >= retention else { return false }
                try store.remove(blob.digest)
                return true
            }
        }
        let gone = Set(report.removed.map(\.digest))
        for (key, file) in thumbnailFiles(store) where gone.contains(key.source) || gone.contains(key.thumbnail) { unlink(file) }
        return report
    }

    /// The blobs live entities reference, and the thumbnails of those.
    func liveBlobs(_ views: LedgerViews) throws -> Set<String> {
        let referenced = try views.referencedAttachments()
        var live = referenced
        for (source, thumbnail) in thumbnailIndex(store) where referenced.contains(source) { live.insert(thumbnail) }
        return live
    }

    /// When a blob was last written or uploaded again (its file's modification time).
    func lastUpload(_ digest: String, _ store: BlobStore) -> Date {
        var info = stat()
        guard let file = try? store.file(of: digest), stat(file, &info) == 0 else { return .distantPast }
        return Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec))
    }

    /// Photo digest → thumbnail digest, from `blobs/thumbnails/`.
    func thumbnailIndex(_ store: BlobStore) -> [(String, String)] {
        thumbnailFiles(store).map { ($0.key.source, $0.key.thumbnail) }
    }

    func thumbnailFiles(_ store: BlobStore) -> [(key: (source: String, thumbnail: String), file: String)] {
        let folder = store.path + "/thumbnails"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).compactMap { name in
            let file = folder + "/" + name
            guard let source = name.split(separator: "-").first.map(String.init), BlobStore.isDigest(source),
                let thumbnail = try? String(contentsOfFile: file, encoding: .utf8), BlobStore.isDigest(thumbnail)
            else { return nil }
            return ((source, thumbnail), file)
        }
    }
}

extension LedgerViews {
    /// `tally audit verify --attachments`: re-hashes every blob held (naming any whose bytes no
    /// longer match its name) and names every referenced blob that is missing.
    public func verifyAttachments() throws -> (checked: Int, damaged: [String], missing: [String]) {
        let store = BlobStore(directory: directory)
        let held = try store.all()
        let damaged = try held.filter { try !store.verify($0.digest) }.map(\.digest)
        return (held.count, damaged, try missingAttachments())
    }
}
