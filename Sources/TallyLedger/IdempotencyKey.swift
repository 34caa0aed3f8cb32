import Crypto
import Foundation
import TallyCore

/// Derives a create's entity id from the caller and its `Idempotency-Key`, so retries of one
/// create name one entity — crash-safe, because the log itself remembers it.
enum IdempotencyKey {
    static func entityID(actor: String, key: String, type: EntityType) -> UUID {
        let digest = Array(SHA256.hash(data: Data("tally-idempotency\u{0}\(actor)\u{0}\(type)\u{0}\(key)".utf8)))
        var bytes = Array(digest.prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50  // version 5-style (name-based)
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 4122 variant
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
