import Foundation
import TallyCore
import TallyLog
import TallySync

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

    /// An attachment's bytes: this replica's, or — when a sync left it on the server
    /// (`AttachmentFetching.whenAsked`) — fetched from `server` now, its digest checked, and kept.
    public func attachment(_ digest: String, from server: SyncServer) async throws -> Data? {
        if let held = try attachment(digest) { return held }
        let transport = try await transport(for: server)
        guard try await writing({ ledger in try await ledger.fetchAttachment(digest, from: transport) }) else { return nil }
        return try attachment(digest)
    }

    /// A small picture of an image attachment (`size`: 128, 256, 512 or 1024 pixels on its
    /// longer side), made by the server (which has the image library) and kept in this
    /// replica's `thumbnails/` folder — what a list shows before, or instead of, the photo. Nil
    /// when the server holds no such attachment (not yet synced from the device that took it:
    /// `attachment(_:)` has the photo itself there).
    public func thumbnail(_ digest: String, size: Int = 256, from server: SyncServer) async throws -> Data? {
        guard BlobStore.isDigest(digest) else { throw ValidationError(field: "attachment", "must be a SHA-256 digest (64 lowercase hex digits)") }
        guard AttachmentType.thumbnailSizes.contains(size) else {
            throw ValidationError(field: "size", "must be one of \(AttachmentType.thumbnailSizes.map(String.init).joined(separator: ", "))")
        }
        let folder = path + "/thumbnails"
        let file = folder + "/\(digest)-\(size)"
        if let kept = FileManager.default.contents(atPath: file) { return kept }
        guard let bytes = try await transport(for: server).fetchThumbnail(digest, size: size) else { return nil }
        guard AttachmentType.sniff(bytes.prefix(32)).map({ $0.hasPrefix("image/") }) == true else {
            throw SyncRejection(source: server.key, reason: "the thumbnail of \(digest) is not an image")
        }
        // Never the replica's folder itself (missing for a moment while a split puts a new one
        // in its place): only the cache inside it.
        guard FileManager.default.fileExists(atPath: path + "/replica.json") else { return Data(bytes) }
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try writeDurably(Data(bytes), to: file, mode: 0o600)
        return Data(bytes)
    }
}
