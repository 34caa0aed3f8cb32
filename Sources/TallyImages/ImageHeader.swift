import CTallyVips
import Foundation

/// What an image's header says, read by libvips without decoding a pixel, and what decoding
/// it for a thumbnail would take.
public struct ImageHeader: Sendable, Equatable {
    public var width: Int
    public var height: Int
    /// Channels after loading (a palette PNG is loaded as RGB or RGBA).
    public var bands: Int
    /// 1 for 8-bit channels, 2 for 16-bit ones, 4 for float.
    public var bytesPerBand: Int
    /// libvips's loader, e.g. `jpegload_buffer`, `pngload_buffer`, `heifload_buffer`.
    public var loader: String
    /// An Adam7 PNG or a progressive JPEG.
    public var isInterlaced: Bool
    /// What the file's metadata takes once read (`PNGChunks.metadataBytes`; 0 for other types).
    public var metadataBytes: Int

    public init(width: Int, height: Int, bands: Int, bytesPerBand: Int, loader: String, isInterlaced: Bool, metadataBytes: Int = 0) {
        (self.width, self.height, self.bands, self.bytesPerBand, self.loader, self.isInterlaced) = (width, height, bands, bytesPerBand, loader, isInterlaced)
        self.metadataBytes = metadataBytes
    }

    public var pixels: Int { width * height }

    /// The memory a thumbnail of `size` pixels needs to decode, estimated from the header, and
    /// whether the image is decoded whole. libvips reads a plain JPEG or PNG a strip at a time
    /// (a JPEG shrunk on load besides), holding the rows one row of the thumbnail is made of —
    /// the longer side over `size`, all of them for a wide strip of an image (a 655,000 × 229
    /// PNG made into a one-row thumbnail holds all 229). Everything else it — or the library
    /// under it — holds whole:
    /// - an Adam7 PNG: libpng needs every pass before any row is final, so the image is
    ///   decoded whole (a 12,247² 16-bit RGBA PNG of 1.2 MB is 1.2 GB of pixels);
    /// - a progressive JPEG: libjpeg keeps every DCT coefficient (2 bytes a sample) until its
    ///   last scan, whatever it is shrunk to;
    /// - HEIC/HEIF: libheif decodes all tiles into planes of its own, which libvips copies;
    /// - WebP and GIF: a whole frame.
    /// Metadata is added (`metadataBytes`). Sizes are multiplied in `Int` after the pixel cap,
    /// so nothing overflows.
    public func decodeBytes(size: Int) -> (bytes: Int, whole: Bool) {
        let sample = bands * bytesPerBand
        let rowsPerThumbnailRow = max(width, height) / max(size, 1) + 2
        let streamingRows = min(height, max(64, 2 * rowsPerThumbnailRow))  // a strip, and the shrink's window
        switch (loaderFamily, isInterlaced) {
        case ("jpegload", false), ("pngload", false): return (width * sample * streamingRows + metadataBytes, false)
        case ("jpegload", true): return (pixels * bands * 2 + metadataBytes, true)
        case ("heifload", _): return (pixels * sample * 2 + metadataBytes, true)
        default: return (pixels * max(sample, 4) + metadataBytes, true)
        }
    }

    /// The loader's name without `_buffer`/`_source`.
    var loaderFamily: String { String(loader.prefix { $0 != "_" }) }

    /// The header of `image`, or nil if libvips cannot read one.
    public static func read(_ image: Data) -> ImageHeader? {
        guard (try? Thumbnailer.start()) != nil else { return nil }
        var header = TallyImageHeader()
        let result = image.withUnsafeBytes { tally_vips_header($0.baseAddress, $0.count, &header) }
        guard result == 0, header.width > 0, header.height > 0, header.bands > 0, header.bytes_per_band > 0 else { return nil }
        let loader = withUnsafeBytes(of: header.loader) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return ImageHeader(
            width: Int(header.width), height: Int(header.height), bands: Int(header.bands),
            bytesPerBand: Int(header.bytes_per_band), loader: loader, isInterlaced: header.interlaced != 0,
            metadataBytes: PNGChunks.metadataBytes(image))
    }
}
