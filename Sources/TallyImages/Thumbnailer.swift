import CTallyVips
import Foundation
import TallyCore
import TallyLog

/// Thumbnails of image attachments (JPEG, PNG, HEIC/HEIF, WebP, GIF), made with libvips on
/// first request and kept as blobs of their own: upright by the photo's EXIF orientation, and
/// with no metadata left (an iPhone photo's GPS position must not travel in its thumbnail).
/// `blobs/thumbnails/DIGEST-SIZE` names the thumbnail blob of each photo and size.
public struct Thumbnailer: Sendable {
    /// The sizes served (the longest side, in pixels).
    public static let sizes = AttachmentType.thumbnailSizes
    /// The media types a thumbnail is made of.
    public static let imageTypes: Set<String> = ["image/jpeg", "image/png", "image/heic", "image/heif", "image/webp", "image/gif"]

    public let store: BlobStore
    public let limits: ThumbnailLimits

    public init(store: BlobStore, limits: ThumbnailLimits = ThumbnailLimits()) { (self.store, self.limits) = (store, limits) }

    /// Why no thumbnail could be made. The descriptions name the problem for the person who
    /// asked, never libvips's internals (those go to the log).
    public enum Failure: Error, CustomStringConvertible, Equatable, Codable {
        case notAnImage(String)
        case unsupportedSize(Int)
        /// libvips could not read it; the associated text is libvips's own, for the log only.
        case undecodable(internal: String)
        case tooManyPixels(Int)
        /// `whole`: the image is one libvips decodes whole (interlaced, progressive, HEIC, …).
        case tooMuchMemory(needs: Int, limit: Int, whole: Bool)
        case tookTooLong(Duration)
        /// The worker decoding it died before it answered: past its memory cap, most likely,
        /// under a header that understates the image (`ThumbnailWorker`).
        case exceededLimits(memory: Int, time: Duration)
        case busy(waiting: Int)
        /// The worker could not be started (its binary replaced or gone, no processes left).
        case workerUnavailable

        public var description: String {
            switch self {
            case .notAnImage(let type): "thumbnails are made of images; this attachment is \(type)"
            case .unsupportedSize(let size): "size \(size) is not one of \(Thumbnailer.sizes.map(String.init).joined(separator: ", "))"
            case .undecodable: "the image could not be read: it is damaged, or not the type its first bytes claim"
            case .tooManyPixels(let pixels):
                "the image claims \(pixels / 1_000_000) megapixels; thumbnails are made of images up to \(Thumbnailer.maxPixels / 1_000_000)"
            case .tooMuchMemory(let needs, let limit, let whole):
                "decoding this image would take about \((needs + (1 << 20) - 1) >> 20) MiB"
                    + (whole ? " (it is stored interlaced, progressive, as HEIC, WebP or GIF, which is decoded whole)" : "")
                    + "; the limit is \(limit >> 20) MiB"
            case .tookTooLong(let limit): "making this thumbnail took longer than \(limit) and was stopped"
            case .exceededLimits(let memory, let time):
                "decoding this image needed more than its limits (about \(memory >> 20) MiB, \(time)): its header does not say how large it is"
            case .busy(let waiting): "\(waiting) thumbnails are already waiting to be made; ask again in a few seconds"
            case .workerUnavailable: "thumbnails cannot be made right now; ask again later"
            }
        }
    }

    /// The thumbnail blob of `digest` at `size` if it was made before.
    public func cached(_ digest: String, size: Int) throws -> BlobInfo? {
        guard let made = try? String(contentsOfFile: indexPath(digest, size), encoding: .utf8), let held = try store.size(of: made) else { return nil }
        return BlobInfo(digest: made, size: held)
    }

    /// The thumbnail blob of `digest` at `size`: the cached one, or one made now and stored.
    /// Blocks for the decode; `ThumbnailQueue` bounds how many run at once.
    public func thumbnail(of digest: String, size: Int) throws -> BlobInfo? {
        guard Self.sizes.contains(size) else { throw Failure.unsupportedSize(size) }
        guard let _ = try store.fetch(digest) else { return nil }  // a node that took a hosted ledger over brings it from the archive
        if let made = try cached(digest, size: size) { return made }
        let type = try store.contentType(of: digest) ?? "application/octet-stream"
        guard Self.imageTypes.contains(type) else { throw Failure.notAnImage(type) }
        let file = try store.file(of: digest)
        let jpeg =
            try limits.workerCommand.map { command in try ThumbnailWorker.run(command, path: file, size: size, limits: limits) }
            ?? Self.jpegThumbnail(of: try Data(contentsOf: URL(fileURLWithPath: file)), size: size, limits: limits)
        let info = try store.local.store(jpeg)  // derived: any node makes it again, so it is not archived
        try FileManager.default.createDirectory(atPath: store.path + "/thumbnails", withIntermediateDirectories: true)
        try writeDurably(Data(info.digest.utf8), to: indexPath(digest, size), mode: 0o600)
        return info
    }

    func indexPath(_ digest: String, _ size: Int) -> String { store.path + "/thumbnails/\(digest)-\(size)" }

    /// The most pixels an image may claim to get a thumbnail (a 100-megapixel camera's photo
    /// fits; a PNG claiming 100,000 × 100,000 pixels is refused from its header). Memory is
    /// bounded separately, by `ThumbnailLimits.maxDecodeBytes`.
    public static let maxPixels = 150_000_000

    /// A JPEG that fits in `size`×`size`, upright, without metadata — made only if the image's
    /// header promises a decode within `limits` (pixels and memory), and stopped at its timeout.
    public static func jpegThumbnail(of image: Data, size: Int, limits: ThumbnailLimits = ThumbnailLimits()) throws -> Data {
        try start()
        // A PNG's compressed text is inflated as its header is read: counted first.
        let metadata = PNGChunks.metadataBytes(image)
        guard metadata <= limits.maxDecodeBytes else { throw Failure.tooMuchMemory(needs: metadata, limit: limits.maxDecodeBytes, whole: false) }
        guard let header = ImageHeader.read(image) else { throw Failure.undecodable(internal: lastError()) }
        guard header.pixels <= maxPixels else { throw Failure.tooManyPixels(header.pixels) }
        let decode = header.decodeBytes(size: size)
        guard decode.bytes <= limits.maxDecodeBytes else {
            throw Failure.tooMuchMemory(needs: decode.bytes, limit: limits.maxDecodeBytes, whole: decode.whole)
        }
        let milliseconds = Int32(clamping: limits.decodeTimeoutMilliseconds)
        var output: UnsafeMutableRawPointer?
        var length = 0
        let result = image.withUnsafeBytes { bytes in
            tally_vips_thumbnail_jpeg(bytes.baseAddress, bytes.count, Int32(size), 82, milliseconds, &output, &length)
        }
        if result == -3 { throw Failure.tookTooLong(limits.decodeTimeout) }
        guard result == 0, let output else { throw Failure.undecodable(internal: lastError()) }
        defer { g_free(output) }
        return Data(bytes: output, count: length)
    }

    /// The upright width and height of an image (tests; orientation applied).
    public static func uprightSize(of image: Data) throws -> (width: Int, height: Int) {
        try start()
        var width: Int32 = 0, height: Int32 = 0
        let result = image.withUnsafeBytes { tally_vips_upright_size($0.baseAddress, $0.count, &width, &height) }
        guard result == 0 else { throw Failure.undecodable(internal: lastError()) }
        return (Int(width), Int(height))
    }

    /// Whether an image carries EXIF metadata (tests).
    public static func hasEXIF(_ image: Data) throws -> Bool {
        try start()
        let result = image.withUnsafeBytes { tally_vips_has_exif($0.baseAddress, $0.count) }
        guard result >= 0 else { throw Failure.undecodable(internal: lastError()) }
        return result == 1
    }

    /// A test photo: a `width`×`height` gradient as JPEG with EXIF orientation (and a GPS tag),
    /// or as HEIC.
    public static func fixture(width: Int, height: Int, orientation: Int, heic: Bool) throws -> Data {
        try start()
        var output: UnsafeMutableRawPointer?
        var length = 0
        guard tally_vips_fixture(Int32(width), Int32(height), Int32(orientation), heic ? 1 : 0, &output, &length) == 0, let output else {
            throw Failure.undecodable(internal: lastError())
        }
        defer { g_free(output) }
        return Data(bytes: output, count: length)
    }

    private static let started: Bool = tally_vips_start_bounded() == 0

    static func start() throws {
        guard started else { throw Failure.undecodable(internal: "libvips did not start: \(lastError())") }
    }

    private static func lastError() -> String {
        let text = vips_error_buffer().map { String(cString: $0) } ?? "unknown error"
        vips_error_clear()
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
