/// Unicode's White_Space characters, by value: the same answer as `properties.isWhitespace`,
/// without a property lookup per scalar (a statement's every cell is trimmed).
public enum Whitespace {
    public static func contains(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }
}
