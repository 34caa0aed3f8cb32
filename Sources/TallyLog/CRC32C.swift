import CTallyLZ4

/// CRC-32C (Castagnoli), the checksum on every segment header and frame.
///
/// With the CPU's `crc32` instruction where there is one (x86-64 with SSE 4.2, in the C
/// shim), several GB/s; otherwise table-driven, slicing-by-8, about 1–2 GB/s in release
/// builds. Either is fast enough that opening a log can check every frame's checksum.
public enum CRC32C {
    static let hardwareAvailable = tally_crc32c_hardware_available() != 0

    /// The checksum of `bytes`, continuing from `crc` (0 to start).
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard hardwareAvailable, let start = bytes.baseAddress else { return tableChecksum(bytes, continuing: crc) }
        return tally_crc32c_hardware(crc, start.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    static let tables: [[UInt32]] = {
        var tables = Array(repeating: Array(repeating: UInt32(0), count: 256), count: 8)
        for n in 0..<256 {
            var crc = UInt32(n)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            tables[0][n] = crc
        }
        for n in 0..<256 {
            for k in 1..<8 { tables[k][n] = (tables[k - 1][n] >> 8) ^ tables[0][Int(tables[k - 1][n] & 0xFF)] }
        }
        return tables
    }()

    /// `checksum` without the CPU instruction (tests compare the two).
    static func tableChecksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var crc = ~crc
        var index = 0
        let count = bytes.count
        tables.withUnsafeBufferPointer { t in
            let t0 = t[0], t1 = t[1], t2 = t[2], t3 = t[3], t4 = t[4], t5 = t[5], t6 = t[6], t7 = t[7]
            t0.withUnsafeBufferPointer { t0 in
                t1.withUnsafeBufferPointer { t1 in
                    t2.withUnsafeBufferPointer { t2 in
                        t3.withUnsafeBufferPointer { t3 in
                            t4.withUnsafeBufferPointer { t4 in
                                t5.withUnsafeBufferPointer { t5 in
                                    t6.withUnsafeBufferPointer { t6 in
                                        t7.withUnsafeBufferPointer { t7 in
                                            while count - index >= 8 {
                                                let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)) ^ UInt64(crc)
                                                crc =
                                                    t7[Int(word & 0xFF)] ^ t6[Int((word >> 8) & 0xFF)] ^ t5[Int((word >> 16) & 0xFF)]
                                                    ^ t4[Int((word >> 24) & 0xFF)] ^ t3[Int((word >> 32) & 0xFF)] ^ t2[Int((word >> 40) & 0xFF)]
                                                    ^ t1[Int((word >> 48) & 0xFF)] ^ t0[Int(word >> 56)]
                                                index += 8
                                            }
                                            while index < count {
                                                crc = t0[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                                                index += 1
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return ~crc
    }

    /// The checksum of a byte array.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
