import Foundation

/// Hand-made PNGs for the thumbnail tests: a real, decodable image of any size whose pixels
/// are all zero, a few bytes per 258 of pixel data — the shape of a decompression bomb
/// (issue 29: a 12,247² 16-bit RGBA Adam7 PNG is a ~7 MB file and 1.2 GB of pixels).
public enum PNGFixture {
    /// An all-black (transparent) `width`×`height` RGBA PNG of `bitDepth` 8 or 16, Adam7
    /// interlaced or not; `trailer` bytes after IEND make otherwise equal files differ.
    public static func zeros(width: Int, height: Int, bitDepth: UInt8 = 16, interlaced: Bool, trailer: [UInt8] = []) -> Data {
        let bytesPerPixel = 4 * Int(bitDepth) / 8
        var rawBytes = 0  // every row of every pass: a filter byte and its pixels
        for (width, height) in passSizes(width: width, height: height, interlaced: interlaced) where width > 0 && height > 0 {
            rawBytes += height * (1 + width * bytesPerPixel)
        }
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        func chunk(_ type: String, _ data: [UInt8]) {
            let body = Array(type.utf8) + data
            png += bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
        }
        chunk("IHDR", bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [bitDepth, 6, 0, 0, interlaced ? 1 : 0])
        chunk("IDAT", zlibZeros(count: rawBytes))
        chunk("IEND", [])
        return Data(png + trailer)
    }

    /// Width and height of each of Adam7's seven passes (or the one image).
    static func passSizes(width: Int, height: Int, interlaced: Bool) -> [(Int, Int)] {
        guard interlaced else { return [(width, height)] }
        let passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
        return passes.map { x, y, dx, dy in (width > x ? (width - x + dx - 1) / dx : 0, height > y ? (height - y + dy - 1) / dy : 0) }
    }

    /// A zlib stream of `count` zero bytes: one fixed-Huffman deflate block holding a literal
    /// zero, then copies of 258 bytes from 1 back (13 bits each), then literals for the rest;
    /// the Adler-32 of n zeros is (n mod 65521) << 16 | 1.
    static func zlibZeros(count: Int) -> [UInt8] {
        var bits = BitWriter()
        bits.write(0b1, count: 1)  // BFINAL
        bits.write(0b01, count: 2)  // BTYPE fixed Huffman
        func literalZero() { bits.writeCode(0x30, length: 8) }
        var left = count
        if left > 0 { literalZero(); left -= 1 }
        let copy: UInt32 = 0b1010_0011  // length symbol 285 (258 bytes, code 11000101 reversed), then distance 0 (1 back, 00000)
        while left >= 258 {
            bits.write(copy, count: 13)
            left -= 258
        }
        for _ in 0..<left { literalZero() }
        bits.writeCode(0, length: 7)  // end of block (256)
        let adler = UInt32(count % 65521) << 16 | 1
        return [0x78, 0x01] + bits.finished + bigEndian(adler)
    }

    /// Deflate's bit order: values least significant bit first, Huffman codes most
    /// significant first (`writeCode` reverses them), gathered in a 64-bit accumulator.
    struct BitWriter {
        var bytes: [UInt8] = []
        var pending: UInt64 = 0
        var filled = 0

        mutating func write(_ value: UInt32, count: Int) {
            pending |= UInt64(value) << UInt64(filled)
            filled += count
            while filled >= 8 {
                bytes.append(UInt8(truncatingIfNeeded: pending))
                pending >>= 8
                filled -= 8
            }
        }

        mutating func writeCode(_ code: UInt32, length: Int) {
            var reversed: UInt32 = 0
            for bit in 0..<length { reversed |= ((code >> UInt32(bit)) & 1) << UInt32(length - 1 - bit) }
            write(reversed, count: length)
        }

        var finished: [UInt8] { filled > 0 ? bytes + [UInt8(truncatingIfNeeded: pending)] : bytes }
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }

    /// The CRC-32 of PNG chunks (ISO 3309).
    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }

    static let crcTable: [UInt32] = (0..<256).map { (index: UInt32) in
        var crc = index
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        return crc
    }
}
