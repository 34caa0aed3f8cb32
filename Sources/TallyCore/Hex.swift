/// Lower-case hexadecimal text of bytes (event hashes, digests). Formatted by hand:
/// `String(format: "%02x")` per byte was most of the cost of `tally log dump --json`.
public enum Hex {
    static let digits = Array("0123456789abcdef".utf8)

    public static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
