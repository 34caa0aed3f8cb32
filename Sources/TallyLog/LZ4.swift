import CTallyLZ4

/// LZ4 block compression with a dictionary: the last `SegmentFormat.windowSize` bytes of the
/// segment's earlier frames. Small frames (one event each) compress well because they share
/// their field names, origin ids and actors with what came just before them.
enum LZ4 {
    /// Worst-case compressed size of `count` bytes.
    static func bound(_ count: Int) -> Int { Int(LZ4_compressBound(Int32(count))) }

    /// Compresses `source` into `destination` (at least `bound(source.count)` bytes) using
    /// `dictionary`; returns the compressed size, or nil when the result would not be smaller.
    static func compress(
        _ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer,
        dictionary: UnsafeRawBufferPointer, stream: Stream
    ) -> Int? {
        guard source.count > 0, source.count <= Int(LZ4_MAX_INPUT_SIZE), destination.count >= bound(source.count) else { return nil }
        LZ4_resetStream_fast(stream.pointer)
        if dictionary.count > 0 {
            LZ4_loadDict(stream.pointer, dictionary.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(dictionary.count))
        }
        let written = LZ4_compress_fast_continue(
            stream.pointer, source.baseAddress!.assumingMemoryBound(to: CChar.self),
            destination.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(source.count), Int32(destination.count), 1)
        guard written > 0, Int(written) < source.count else { return nil }
        return Int(written)
    }

    /// A compression state, reused across frames to save its 16 KiB allocation and set-up.
    final class Stream {
        let pointer: UnsafeMutablePointer<LZ4_stream_t>
        init() { pointer = LZ4_createStream()! }
        deinit { LZ4_freeStream(pointer) }
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
