/// Reads a segment file's bytes the way the log reader does — frame headers and checksums,
/// LZ4 against the window, every event of every frame — for tools and fuzzing that hold the
/// bytes rather than a log directory.
public enum SegmentBytes {
    /// Decodes every event, or throws at the first damage; returns how many decoded.
    /// `isLast` reads the bytes as the newest segment (a torn tail is tolerated, not an error).
    @discardableResult
    public static func decodeEvents(_ bytes: UnsafeRawBufferPointer, isLast: Bool) throws -> Int {
        // There is no file name to check the header's first index against, so take the name
        // the header claims; every other check (magic, checksums, frames, events) applies.
        var firstIndex: UInt64 = 1
        if bytes.count >= 20 { firstIndex = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 12, as: UInt64.self)) }
        var count = 0
        _ = try SegmentScanner.scan(bytes, name: SegmentFormat.fileName(firstIndex: firstIndex), isLast: isLast) { frame in
            guard frame.header.type == .events else { return }
            try EventBatch.forEachEvent(in: frame.payload, count: frame.header.eventCount) { event in
                _ = try EventCodec.decode(event)
                count += 1
            }
        }
        return count
    }
}
