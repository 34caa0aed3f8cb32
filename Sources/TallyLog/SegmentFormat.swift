import Foundation
import TallyCore

/// Constants and headers of the segment file format, version 1 (docs/LOG_FORMAT.md).
public enum SegmentFormat {
    /// The format version written by this build.
    public static let version: UInt16 = 1
    /// First 8 bytes of every segment file.
    static let fileMagic: [UInt8] = Array("TALLYSEG".utf8)
    /// First 4 bytes of every frame ("TFRM", little-endian).
    static let frameMagic: UInt32 = 0x4D52_4654
    /// Size of the segment file header.
    public static let fileHeaderSize = 32
    /// Size of a frame header.
    public static let frameHeaderSize = 36
    /// Target uncompressed payload of one frame; bigger batches are split.
    public static let maxFrameRawSize = 1 << 20
    /// Largest payload a reader accepts: a frame holds at least one event, and one event may
    /// exceed the split target (up to `LogConfiguration.maxEventSize`, 4 MiB).
    static let maxFrameRawAccepted = 8 << 20
    /// How much earlier data (uncompressed) serves as the LZ4 dictionary of the next frame.
    public static let windowSize = 16 << 10
    /// Extension of segment files; names are the first log index in 16 hex digits.
    public static let fileExtension = "tseg"

    /// `0000000000000001.tseg` for a segment whose first event has log index 1.
    public static func fileName(firstIndex: UInt64) -> String {
        let hex = String(firstIndex, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex + "." + fileExtension
    }

    /// The largest log index a segment may hold. No log comes near it (a million events a
    /// second for 146,000 years); what it rules out is a name, header or frame — from a
    /// bundle, an archive, a damaged disk — whose indexes would wrap past `UInt64.max`.
    public static let maxLogIndex: UInt64 = 1 << 62

    /// The first log index encoded in a segment file name, or nil if it is not one: exactly
    /// the name `fileName` gives (sixteen lowercase hex digits) of an index from 1 to
    /// `maxLogIndex`, so "+000000000000001.tseg", an upper-case one or "0000000000000000.tseg"
    /// — from a bundle's manifest, an archive — is no segment's name.
    public static func firstIndex(fromFileName name: String) -> UInt64? {
        guard name.hasSuffix("." + fileExtension), name.count == 16 + 1 + fileExtension.count,
            let index = UInt64(name.prefix(16), radix: 16), (1...maxLogIndex).contains(index), fileName(firstIndex: index) == name
        else { return nil }
        return index
    }

    /// Bytes of a segment file header.
    static func fileHeader(firstIndex: UInt64) -> [UInt8] {
        var out = ByteWriter(capacity: fileHeaderSize)
        out.raw(fileMagic)
        out.u16(version)
        out.u16(0)
        out.u64(firstIndex)
        out.u64(0)
        out.u32(CRC32C.checksum(out.bytes))
        return out.bytes
    }
}

/// What a frame holds.
public enum FrameType: UInt8, Sendable {
    /// A batch of events.
    case events = 1
    /// The last frame of a sealed segment: a summary of the log up to there.
    case seal = 2
    /// Signed chain heads and key rotations (`SignatureRecord`), after the events they cover.
    case signatures = 3
}

/// How a frame's payload is stored.
enum FrameCodec: UInt8 {
    case none = 0
    case lz4WithWindow = 1
}

/// The fixed-size header in front of every frame's payload.
struct FrameHeader: Equatable {
    var type: FrameType
    var codec: FrameCodec
    var eventCount: UInt32
    var firstIndex: UInt64
    var rawLength: UInt32
    var storedLength: UInt32
    var payloadChecksum: UInt32

    /// Encodes the header, closing it with a checksum of its own first 32 bytes.
    func encoded() -> [UInt8] {
        var out = ByteWriter(capacity: SegmentFormat.frameHeaderSize)
        out.u32(SegmentFormat.frameMagic)
        out.u8(type.rawValue)
        out.u8(codec.rawValue)
        out.u16(0)
        out.u32(eventCount)
        out.u64(firstIndex)
        out.u32(rawLength)
        out.u32(storedLength)
        out.u32(payloadChecksum)
        out.u32(CRC32C.checksum(out.bytes))
        return out.bytes
    }

    /// Parses a header; nil when magic, checksum or field values are wrong.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> FrameHeader? {
        guard bytes.count >= SegmentFormat.frameHeaderSize else { return nil }
        var input = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[0..<SegmentFormat.frameHeaderSize]))
        guard (try? input.u32()) == SegmentFormat.frameMagic,
            let typeByte = try? input.u8(), let type = FrameType(rawValue: typeByte),
            let codecByte = try? input.u8(), let codec = FrameCodec(rawValue: codecByte),
            (try? input.u16()) == 0,
            let eventCount = try? input.u32(), let firstIndex = try? input.u64(),
            let rawLength = try? input.u32(), let storedLength = try? input.u32(),
            let payloadChecksum = try? input.u32(), let headerChecksum = try? input.u32(),
            headerChecksum == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<32])),
            rawLength <= SegmentFormat.maxFrameRawAccepted, storedLength <= SegmentFormat.maxFrameRawAccepted + (1 << 16)
        else { return nil }
        return FrameHeader(
            type: type, codec: codec, eventCount: eventCount, firstIndex: firstIndex,
            rawLength: rawLength, storedLength: storedLength, payloadChecksum: payloadChecksum)
    }
}
