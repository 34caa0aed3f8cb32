import Foundation
import TallyCore
import TallyLog
import TallyStore

/// Attachments (docs/ATTACHMENTS.md): the blob store of this replica, and the rule that a local
/// write may only reference attachments this replica holds (a digest nobody uploaded is a typo
/// or a lost upload; events from peers may reference blobs that have not arrived yet).
extension Ledger {
    /// This replica's blobs.
    public var blobs: BlobStore { BlobStore(directory: directory) }

    /// The largest blob a sync takes from a peer (a peer's own limit may be set up to 4 GiB).
    static let maxReplicatedBlobBytes = 4 << 30

    /// Throws if `properties` attach a digest this replica holds no blob of.
    func checkAttachmentsHeld(_ properties: PropertyMap) throws {
        guard case .strings(let digests)? = properties[.attachments] else { return }
        for digest in digests where try blobs.size(of: digest) == nil {
            throw ValidationError(field: "attachments", "no attachment \(digest) on this replica; upload it first (POST /v1/attachments, or tally attachment add)",
                                  kind: .conflictsWithState)
        }
    }
}

extension LedgerViews {
    /// Every attachment a live expense or to-do references.
    public func referencedAttachments() throws -> Set<String> {
        try projector.database.read { try ProjectionQueries.referencedAttachments($0) }
    }

    /// Attachments referenced by live entities that this replica does not hold (yet): sent by
    /// a peer whose blobs have not arrived, to be fetched by the next sync.
    public func missingAttachments() throws -> [String] {
        let blobs = BlobStore(directory: projector.directory)
        return try referencedAttachments().filter { try blobs.size(of: $0) == nil }.sorted()
    }
}
