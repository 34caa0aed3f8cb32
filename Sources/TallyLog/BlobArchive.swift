/// Something that must hold every attachment a ledger is given before it is acknowledged: a
/// cluster's PostgreSQL (issue 32), where an upload answered by one node must survive that
/// node's loss, as its log's bytes do (`SegmentArchive`).
///
/// The blob store (`BlobStore`) hands it a blob's file once the bytes are whole and fsynced and
/// makes the blob visible only if `archive` returns — and again when the same bytes are
/// uploaded or attached while held only here (`BlobStore.ensureArchived`); a node that does
/// not hold a blob asks it for the bytes (`BlobStore.fetch`) and keeps them once they hash to
/// their name. Derived blobs (thumbnails) are not archived: any node makes them again.
///
/// Called on blocking threads (never Swift's cooperative ones): an implementation may wait.
public protocol BlobArchive: Sendable {
    /// The largest blob it takes.
    var maxBlobBytes: Int { get }
    /// Stores the blob `digest`, whose bytes are in `file`; a blob stored already is no error.
    func archive(blob digest: String, file: String) throws
    /// Whether it holds the blob `digest`.
    func holds(blob digest: String) throws -> Bool
    /// Which of `digests` it holds (a peer's question of which blobs a replica lacks).
    func held(among digests: [String]) throws -> Set<String>
    /// The bytes of the blob `digest`, or nil if the archive holds none.
    func bytes(ofBlob digest: String) throws -> [UInt8]?
    /// Every blob it holds for the ledger, with its size.
    func blobs() throws -> [BlobInfo]
    /// The bytes of every blob it holds for the ledger (what an attachment quota counts).
    func totalBytes() throws -> Int
    /// Deletes the blob `digest` (retention: no live entity references it any longer).
    func remove(blob digest: String) throws
}

extension BlobArchive {
    /// The sizes of `blobs()`, added up (an archive that can sum for itself says so).
    public func totalBytes() throws -> Int { try blobs().reduce(0) { $0 + $1.size } }

    /// `digests` that `blobs()` lists (an archive that can look them up for itself says so).
    public func held(among digests: [String]) throws -> Set<String> {
        Set(try blobs().map(\.digest)).intersection(digests)
    }
}

/// Where everything a hosted ledger acknowledges goes first: its log's bytes and its attachments.
public typealias LedgerArchive = SegmentArchive & BlobArchive
