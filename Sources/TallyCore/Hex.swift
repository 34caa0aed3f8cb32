/// Lower-case hexadecimal text of bytes (event hashes, digests). Formatted by hand:
/// `String(format: "%02x")` per byte was most of the cost of `tally log dump --json`.
public enum Hex {
    static let digits = Array("0123456789abcdef".utf8)

    public static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        // Copied out first: a digest's count is not known to its sequence, and growing the text
        // a byte at a time was most of what an import's rows cost to key.
        let bytes = Array(bytes)
        return String(unsafeUninitializedCapacity: bytes.count * 2) { text in
            for (position, byte) in bytes.enumerated() {
                text[2 * position] = digits[Int(byte >> 4)]
                text[2 * position + 1] = digits[Int(byte & 0x0F)]
            }
            return bytes.count * 2
        }
    }
}

extension Hex {
    /// The bytes of an even-length string of hex digits (either case); nil for anything else.
    public static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var position = 0
        while position < utf8.count {
            guard let high = value(of: utf8[position]), let low = value(of: utf8[position + 1]) else { return nil }
            bytes.append(high << 4 | low)
            position += 2
        }
        return bytes
    }

    /// The value of one hex digit (either case); nil for any other byte.
    public static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
