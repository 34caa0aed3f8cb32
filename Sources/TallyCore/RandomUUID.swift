import Foundation

extension UUID {
    /// A random (version 4) UUID from the system's generator (`getrandom(2)`: no file to open).
    ///
    /// Foundation's `UUID()` reads `/dev/urandom` on Linux, and a process out of file
    /// descriptors got all-zero UUIDs from it — new entities and replicas that would all have
    /// been one (found when the hosting bench's review exhausted a server's descriptors). Every
    /// id Tally makes comes from here.
    public static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 4122 variant
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}
