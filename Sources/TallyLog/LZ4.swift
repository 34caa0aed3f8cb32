import CTallyLZ4

/// LZ4 block compression with a dictionary: the last `SegmentFormat.windowSize` bytes of the
/// segment's earlier frames. Small frames (one event each) compress well because they share
/// their field names, origin ids and actors with what came just before them.
enum LZ4 {
    /// Compresses `source` using `dictionary`; nil when the result would not be smaller.
    static func compress(_ source: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer) -> [UInt8]? {
        guard source.count > 0, source.count <= Int(LZ4_MAX_INPUT_SIZE) else { return nil }
        let stream = LZ4_createStream()!
        defer { LZ4_freeStream(stream) }
        if dictionary.count > 0 {
            LZ4_loadDict(stream, dictionary.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(dictionary.count))
        }
        let capacity = Int(LZ4_compressBound(Int32(source.count)))
        var output = [UInt8](repeating: 0, count: capacity)
        let written = output.withUnsafeMutableBytes { out in
            LZ4_compress_fast_continue(
                stream, source.baseAddress!.assumingMemoryBound(to: CChar.self),
                out.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(source.count), Int32(capacity), 1)
        }
        guard written > 0, Int(written) < source.count else { return nil }
        output.removeSubrange(Int(written)...)
        return output
    }

    /// Decompresses exactly `rawLength` bytes, or throws if the block is malformed.
    static func decompress(_ source: UnsafeRawBufferPointer, rawLength: Int, dictionary: UnsafeRawBufferPointer) throws(DecodingError) -> [UInt8] {
        guard rawLength >= 0, source.count > 0 else { throw DecodingError("empty LZ4 block") }
        var output = [UInt8](repeating: 0, count: rawLength)
        let produced = output.withUnsafeMutableBytes { out -> Int32 in
            // A zero-length buffer may have no base address; LZ4 wants a valid pointer.
            withUnsafeTemporaryAllocation(byteCount: 1, alignment: 1) { scratch in
                LZ4_decompress_safe_usingDict(
                    source.baseAddress!.assumingMemoryBound(to: CChar.self),
                    (out.baseAddress ?? scratch.baseAddress!).assumingMemoryBound(to: CChar.self),
                    Int32(source.count), Int32(rawLength),
                    (dictionary.baseAddress ?? UnsafeRawPointer(scratch.baseAddress!)).assumingMemoryBound(to: CChar.self),
                    Int32(dictionary.count))
            }
        }
        guard produced == Int32(rawLength) else { throw DecodingError("LZ4 block does not decompress to \(rawLength) bytes") }
        return output
    }
}
