import Foundation

/// A PNG's metadata chunks, walked without decoding anything: libpng inflates every
/// compressed text or colour-profile chunk it reads (up to 8 MB each, libvips's cap per
/// chunk) and libvips keeps a copy, so a 771 KB file of 100 `zTXt` chunks took 1.5 GB
/// (issue 29's review). What they may take is counted into the decode's estimate.
enum PNGChunks {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    /// The most one compressed chunk is inflated to (libvips's cap per chunk).
    static let maxInflated = 8 << 20

    /// The memory `image`'s metadata chunks may take once read, and libvips's copy of it: for
    /// each compressed one (`zTXt`, `iTXt`, `iCCP`) what its bytes can inflate to — deflate
    /// expands at most 1,032 times, and libpng stops at `maxInflated` — and for each plain
    /// `tEXt` its length; doubled. 0 if `image` is not a PNG. Read before libvips reads the
    /// header, which inflates them.
    static func metadataBytes(_ image: Data) -> Int {
        guard image.starts(with: signature) else { return 0 }
        var total = 0
        var offset = image.startIndex + signature.count
        while offset + 8 <= image.endIndex {
            let length = image[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: image[offset + 4..<offset + 8], as: UTF8.self)
            switch type {
            case "zTXt", "iTXt", "iCCP": total += 2 * min(maxInflated, length * 1_032)
            case "tEXt": total += 2 * length
            case "IEND": return total
            default: break
            }
            offset += 12 + length  // length, type, data, CRC
        }
        return total
    }
}
