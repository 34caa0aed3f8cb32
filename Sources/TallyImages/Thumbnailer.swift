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
    public static let sizes = [128, 256, 512, 1024]
    /// The media types a thumbnail is made of.
    public static let imageTypes: Set<String> = ["image/jpeg", "image/png", "image/heic", "image/heif", "image/webp", "image/gif"]

    public let store: BlobStore

    public init(store: BlobStore) { self.store = store }

    /// Why no thumbnail could be made.
    public enum Failure: Error, CustomStringConvertible, Equatable {
        case notAnImage(String)
        case unsupportedSize(Int)
        case undecodable(String)

        public var description: String {
            switch self {
            case .notAnImage(let type): "thumbnails are made of images; this attachment is \(type)"
            case .unsupportedSize(let size): "size \(size) is not one of \(Thumbnailer.sizes.map(String.init).joined(separator: ", "))"
            case .undecodable(let reason): "the image could not be read: \(reason)"
            }
        }
    }

    /// The thumbnail blob of `digest` at `size`: the cached one, or one made now and stored.
    public func thumbnail(of digest: String, size: Int) throws -> BlobInfo? {
        guard Self.sizes.contains(size) else { throw Failure.unsupportedSize(size) }
        guard let _ = try store.size(of: digest) else { return nil }
        let index = store.path + "/thumbnails/\(digest)-\(size)"
        if let cached = try? String(contentsOfFile: index, encoding: .utf8), let held = try store.size(of: cached) {
            return BlobInfo(digest: cached, size: held)
        }
        let type = try store.contentType(of: digest) ?? "application/octet-stream"
        guard Self.imageTypes.contains(type) else { throw Failure.notAnImage(type) }
        let source = try Data(contentsOf: URL(fileURLWithPath: try store.file(of: digest)))
        let info = try store.store(try Self.jpegThumbnail(of: source, size: size))
        try FileManager.default.createDirectory(atPath: store.path + "/thumbnails", withIntermediateDirectories: true)
        try writeDurably(Data(info.digest.utf8), to: index, mode: 0o600)
        return info
    }

    /// The most pixels an image may claim to get a thumbnail (a 100-megapixel camera's photo
    /// fits; a PNG claiming 100,000 × 100,000 pixels is refused from its header).
    public static let maxPixels = 150_000_000

    /// A JPEG that fits in `size`×`size`, upright, without metadata.
    public static func jpegThumbnail(of image: Data, size: Int) throws -> Data {
        try start()
        var output: UnsafeMutableRawPointer?
        var length = 0
        let result = image.withUnsafeBytes { bytes in
            tally_vips_thumbnail_jpeg(bytes.baseAddress, bytes.count, Int32(size), 82, Double(maxPixels), &output, &length)
        }
        if result == -2 { throw Failure.undecodable("it claims more than \(maxPixels / 1_000_000) megapixels") }
        guard result == 0, let output else { throw Failure.undecodable(lastError()) }
        defer { g_free(output) }
        return Data(bytes: output, count: length)
    }

    /// The upright width and height of an image (tests; orientation applied).
    public static func uprightSize(of image: Data) throws -> (width: Int, height: Int) {
        try start()
        var width: Int32 = 0, height: Int32 = 0
        let result = image.withUnsafeBytes { tally_vips_upright_size($0.baseAddress, $0.count, &width, &height) }
        guard result == 0 else { throw Failure.undecodable(lastError()) }
        return (Int(width), Int(height))
    }

    /// Whether an image carries EXIF metadata (tests).
    public static func hasEXIF(_ image: Data) throws -> Bool {
        try start()
        let result = image.withUnsafeBytes { tally_vips_has_exif($0.baseAddress, $0.count) }
        guard result >= 0 else { throw Failure.undecodable(lastError()) }
        return result == 1
    }

    /// A test photo: a `width`×`height` gradient as JPEG with EXIF orientation (and a GPS tag),
    /// or as HEIC.
    public static func fixture(width: Int, height: Int, orientation: Int, heic: Bool) throws -> Data {
        try start()
        var output: UnsafeMutableRawPointer?
        var length = 0
        guard tally_vips_fixture(Int32(width), Int32(height), Int32(orientation), heic ? 1 : 0, &output, &length) == 0, let output else {
            throw Failure.undecodable(lastError())
        }
        defer { g_free(output) }
        return Data(bytes: output, count: length)
    }

    private static let started: Bool = tally_vips_start() == 0

    private static func start() throws {
        guard started else { throw Failure.undecodable("libvips did not start: \(lastError())") }
    }

    private static func lastError() -> String {
        let text = vips_error_buffer().map { String(cString: $0) } ?? "unknown error"
        vips_error_clear()
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
