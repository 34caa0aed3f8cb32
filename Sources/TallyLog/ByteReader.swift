import Foundation

/// Reads what `ByteWriter` wrote, checking every bound: malformed input throws, never traps.
public struct ByteReader {
    let base: UnsafeRawBufferPointer
    /// Position of the next byte to read.
    public var offset: Int

    /// A reader of `base` from `offset`.
    public init(_ base: UnsafeRawBufferPointer, offset: Int = 0) {
        self.base = base
        self.offset = offset
    }

    public var remaining: Int { base.count - offset }
    public var atEnd: Bool { offset == base.count }

    // The reads below are inlined into the decoders (a call per byte cost more than the
    // decoding); only the error message is built out of line, when the input is short.

    @inline(__always)
    public mutating func take(_ count: Int) throws(DecodingError) -> UnsafeRawBufferPointer {
        guard count >= 0, count <= remaining else { throw shortInput(needs: count) }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: base[offset..<offset + count])
    }

    @inline(__always)
    public mutating func u8() throws(DecodingError) -> UInt8 {
        guard offset < base.count else { throw shortInput(needs: 1) }
        defer { offset += 1 }
        return base[offset]
    }

    @inline(never)
    private func shortInput(needs count: Int) -> DecodingError {
        DecodingError("needs \(count) bytes at offset \(offset), \(remaining) left")
    }

    public mutating func u16() throws(DecodingError) -> UInt16 { try fixed() }
    public mutating func u32() throws(DecodingError) -> UInt32 { try fixed() }
    public mutating func u64() throws(DecodingError) -> UInt64 { try fixed() }

    private mutating func fixed<T: FixedWidthInteger>() throws(DecodingError) -> T {
        let slice = try take(MemoryLayout<T>.size)
        return T(littleEndian: slice.loadUnaligned(as: T.self))
    }

    @inline(__always)
    public mutating func varint() throws(DecodingError) -> UInt64 {
        // Most varints here (lengths, counts, small numbers) are one byte.
        if offset < base.count, base[offset] < 0x80 {
            defer { offset += 1 }
            return UInt64(base[offset])
        }
        return try longVarint()
    }

    private mutating func longVarint() throws(DecodingError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try u8()
            if shift == 63, byte > 1 { throw DecodingError("varint overflows 64 bits at offset \(offset)") }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                // A last byte of zero after others is an overlong form: the writer never makes it,
                // and accepting it would give one value two encodings (found by FuzzEvents).
                if byte == 0, shift > 0 { throw DecodingError("overlong varint at offset \(offset - 1)") }
                return result
            }
            shift += 7
            if shift > 63 { throw DecodingError("varint longer than 10 bytes at offset \(offset)") }
        }
    }

    public mutating func signedVarint() throws(DecodingError) -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    public mutating func length(max: Int) throws(DecodingError) -> Int {
        let value = try varint()
        guard value <= UInt64(max), value <= UInt64(remaining) else {
            throw DecodingError("length \(value) exceeds \(min(max, remaining)) at offset \(offset)")
        }
        return Int(value)
    }

    public mutating func string(maxBytes: Int) throws(DecodingError) -> String {
        let slice = try take(try length(max: maxBytes))
        // ASCII (most text here: ids, codes, many memos) is valid UTF-8 as it is, and copying it
        // in directly skips the generic validator, which cost more than decoding the rest of the event.
        if !slice.contains(where: { $0 >= 0x80 }) {
            return String(unsafeUninitializedCapacity: slice.count) { buffer in
                _ = buffer.initialize(from: slice)
                return slice.count
            }
        }
        guard let text = String(validating: slice, as: UTF8.self) else { throw DecodingError("invalid UTF-8 at offset \(offset - slice.count)") }
        return text
    }

    public mutating func uuid() throws(DecodingError) -> UUID {
        let slice = try take(16)
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: slice) }
        return UUID(uuid: value)
    }
}

/// Bytes that are not a valid encoding; the message says what and where.
public struct DecodingError: Error, Sendable, CustomStringConvertible {
    /// What was wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}
