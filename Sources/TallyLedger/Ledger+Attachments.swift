import Foundation
import TallyCore
import TallyLog

/// Attachments (docs/ATTACHMENTS.md): the blob store of this replica, and the rule that a local
/// write may only reference attachments this replica holds (a digest nobody uploaded is a typo
/// or a lost upload; events from peers may reference blobs that have not arrived yet).
extension Ledger {
    /// This replica's blobs.
    public var blobs: BlobStore { BlobStore(directory: directory) }

    /// Throws if `properties` attach a digest this replica holds no blob of.
    func checkAttachmentsHeld(_ properties: PropertyMap) throws {
        guard case .strings(let digests)? = properties[.attachments] else { return }
        for digest in digests where try blobs.size(of: digest) == nil {
            throw ValidationError(field: "attachments", "no attachment \(digest) on this replica; upload it first (POST /v1/attachments, or tally attachment add)",
                                  kind: .conflictsWithState)
        }
    }
}
