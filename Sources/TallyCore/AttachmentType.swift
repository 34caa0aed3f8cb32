/// What an attachment is, told from its first bytes — never from a file name or a client's
/// word: JPEG, PNG, HEIC/HEIF (an iPhone's photos), WebP, GIF and PDF.
public enum AttachmentType {
    /// The thumbnail sizes a server makes and a client may ask for (the longest side, in pixels).
    public static let thumbnailSizes = [128, 256, 512, 1024]

    /// The media types told apart, for configuration and documentation.
    public static let known = ["image/jpeg", "image/png", "image/heic", "image/heif", "image/webp", "image/gif", "application/pdf"]

    /// The media type of a file starting with `head` (its first 16 bytes suffice), or nil.
    public static func sniff(_ head: some Collection<UInt8>) -> String? {
        let bytes = Array(head.prefix(32))
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<(offset + prefix.count)]) == prefix
        }
        func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if starts(ascii("%PDF-")) { return "application/pdf" }
        if starts(ascii("GIF87a")) || starts(ascii("GIF89a")) { return "image/gif" }
        if starts(ascii("RIFF")), starts(ascii("WEBP"), at: 8) { return "image/webp" }
        // ISO base media: a box size, then "ftyp" and the major brand.
        if starts(ascii("ftyp"), at: 4), bytes.count >= 12 {
            switch String(decoding: bytes[8..<12], as: UTF8.self) {
            case "heic", "heix", "heim", "heis", "hevc", "hevx", "hevm", "hevs": return "image/heic"
            case "mif1", "msf1": return "image/heif"
            default: return nil
            }
        }
        return nil
    }
}
