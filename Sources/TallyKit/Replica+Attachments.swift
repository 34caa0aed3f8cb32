import Foundation
import TallyCore
import TallyLog

/// Attachments: a photo of a receipt stored by its SHA-256 digest, which an expense's or a
/// to-do's `attachments` then names. Syncs carry them.
extension Replica {
    /// The largest attachment an app stores (the service's default upload limit).
    public static let maxAttachmentBytes = 25 << 20

    /// Stores `data` (a JPEG, PNG, HEIC, WebP or PDF) and returns its digest, to put in an
    /// expense's `attachments`. It is stored as a write is (taking turns with the other
    /// process's writes), so that it lands in the folder the expense's write will.
    public func addAttachment(_ data: Data) async throws -> String {
        guard AttachmentType.sniff(data.prefix(32)) != nil else {
            throw ValidationError(field: "attachment", "must be a JPEG, PNG, HEIC, WebP or PDF file")
        }
        return try await writing { ledger in try BlobStore(directory: ledger.directory).store(data, limit: Self.maxAttachmentBytes).digest }
    }

    /// The bytes of an attachment, or nil when this replica does not hold it (yet: a sync
    /// fetches what its expenses name).
    public func attachment(_ digest: String) throws -> Data? {
        guard BlobStore.isDigest(digest) else { throw ValidationError(field: "attachment", "must be a SHA-256 digest (64 lowercase hex digits)") }
        let store = BlobStore(directory: try directory)
        guard try store.size(of: digest) != nil else { return nil }
        return FileManager.default.contents(atPath: try store.file(of: digest))
    }
}
