import Crypto
import Foundation
import TallyCore

/// Derives a create's entity id from the caller and its `Idempotency-Key`, so retries of one
/// create name one entity — crash-safe, because the log itself remembers it.
public enum IdempotencyKey {
    public static func entityID(actor: String, key: String, type: EntityType) -> UUID {
        NameBasedUUID.of("tally-idempotency\u{0}\(actor)\u{0}\(type)\u{0}\(key)")
    }
}

/// A UUID derived from a name: the first 16 bytes of its SHA-256, marked version 5-style
/// (name-based) and RFC 4122 variant. The same name gives the same id on every replica.
public enum NameBasedUUID {
    public static func of(_ name: String) -> UUID {
        var bytes = Array(SHA256.hash(data: Data(name.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}
