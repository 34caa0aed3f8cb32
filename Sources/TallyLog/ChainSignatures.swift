import Crypto
import Foundation
import TallyCore

/// An Ed25519 public key (32 bytes) that signs one origin's chain.
public struct OriginKey: Hashable, Sendable, CustomStringConvertible {
    /// The raw 32 key bytes.
    public let bytes: [UInt8]

    /// A key from its raw bytes; nil unless exactly 32.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 32 else { return nil }
        self.bytes = Array(bytes)
    }

    /// A key from 64 hex digits.
    public init?(hex: String) {
        guard let bytes = Hex.decode(hex) else { return nil }
        self.init(bytes: bytes)
    }

    /// Lowercase hex (what `tally keys show` prints and `tally peers trust` takes).
    public var description: String { Hex.lowercase(bytes) }

    /// Whether `signature` is this key's signature of `message`.
    func verifies(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: bytes) else { return false }
        return key.isValidSignature(signature, for: message)
    }
}

/// "The chain of `origin` up to `sequence` ends in the event with `hash`", signed by the key
/// the origin's replica holds. Through the hash chain it vouches for every event of the origin
/// up to that one, so one signature per durable batch covers the batch (not one per event).
public struct SignedHead: Hashable, Sendable {
    public var origin: ReplicaID
    public var sequence: UInt64
    public var hash: EventHash
    /// The key that signed (it must be the one pinned for the origin).
    public var key: OriginKey
    /// Ed25519 signature (64 bytes) of `message`.
    public var signature: [UInt8]

    /// The bytes signed: a domain label, then origin, sequence and hash.
    public var message: [UInt8] { Self.message(origin: origin, sequence: sequence, hash: hash) }

    static func message(origin: ReplicaID, sequence: UInt64, hash: EventHash) -> [UInt8] {
        signedBytes(label: "tally signed head v1\n", origin: origin, sequence: sequence, tail: hash.bytes)
    }

    /// Whether the signature is `key`'s over this head.
    public var isValid: Bool { key.verifies(signature, of: message) }
}

/// "From after `afterSequence` on, `origin` signs with `newKey`", signed by the key it replaces.
/// A replica that lost trust in its key (a copied data directory, a departing device) rotates
/// it; receivers that pinned the old key follow the rotation, and nobody else's word moves a pin.
public struct KeyRotation: Hashable, Sendable {
    public var origin: ReplicaID
    public var afterSequence: UInt64
    public var oldKey: OriginKey
    public var newKey: OriginKey
    /// Ed25519 signature by `oldKey` of `message`.
    public var signature: [UInt8]

    public var message: [UInt8] {
        signedBytes(label: "tally key rotation v1\n", origin: origin, sequence: afterSequence, tail: newKey.bytes)
    }

    public var isValid: Bool { oldKey.verifies(signature, of: message) }
}

/// What a signatures frame (type 3) holds, in order: signed heads and key rotations.
public enum SignatureRecord: Hashable, Sendable {
    case head(SignedHead)
    case rotation(KeyRotation)

    /// The origin it speaks for.
    public var origin: ReplicaID {
        switch self {
        case .head(let head): head.origin
        case .rotation(let rotation): rotation.origin
        }
    }

    /// Encodes one record: a kind byte (1 head, 2 rotation), then its fields (LOG_FORMAT.md §2).
    public func encode(into out: inout ByteWriter) {
        switch self {
        case .head(let head):
            out.u8(1)
            out.uuid(head.origin.uuid)
            out.varint(head.sequence)
            out.raw(head.hash.bytes)
            out.raw(head.key.bytes)
            out.raw(head.signature)
        case .rotation(let rotation):
            out.u8(2)
            out.uuid(rotation.origin.uuid)
            out.varint(rotation.afterSequence)
            out.raw(rotation.oldKey.bytes)
            out.raw(rotation.newKey.bytes)
            out.raw(rotation.signature)
        }
    }

    /// Decodes one record (signatures are not checked here).
    public static func decode(from input: inout ByteReader) throws(DecodingError) -> SignatureRecord {
        let kind = try input.u8()
        let origin = ReplicaID(try input.uuid())
        let sequence = try input.varint()
        switch kind {
        case 1:
            let hash = EventHash(bytes: try input.take(32))
            let key = OriginKey(bytes: try input.take(32))!
            return .head(SignedHead(origin: origin, sequence: sequence, hash: hash, key: key, signature: Array(try input.take(64))))
        case 2:
            let oldKey = OriginKey(bytes: try input.take(32))!
            let newKey = OriginKey(bytes: try input.take(32))!
            return .rotation(KeyRotation(origin: origin, afterSequence: sequence, oldKey: oldKey, newKey: newKey, signature: Array(try input.take(64))))
        default:
            throw DecodingError("unknown signature record kind \(kind)")
        }
    }

    /// A signatures frame's payload: a varint count, then the records.
    public static func encodeList(_ records: [SignatureRecord]) -> [UInt8] {
        var out = ByteWriter(capacity: 16 + records.count * 160)
        out.varint(UInt64(records.count))
        for record in records { record.encode(into: &out) }
        return out.bytes
    }

    /// Decodes a signatures frame's payload; throws on anything but exactly its records.
    public static func decodeList(_ bytes: UnsafeRawBufferPointer) throws(DecodingError) -> [SignatureRecord] {
        var input = ByteReader(bytes)
        let count = try input.length(max: bytes.count / 100 + 1)
        var records: [SignatureRecord] = []
        records.reserveCapacity(count)
        for _ in 0..<count { records.append(try decode(from: &input)) }
        guard input.atEnd else { throw DecodingError("unexpected bytes after the signature records") }
        return records
    }

    /// One record on its own (a stream record), with nothing after it.
    public static func decodeOne(_ bytes: UnsafeRawBufferPointer) throws(DecodingError) -> SignatureRecord {
        var input = ByteReader(bytes)
        let record = try decode(from: &input)
        guard input.atEnd else { throw DecodingError("unexpected bytes after a signature record") }
        return record
    }
}

/// This replica's private signing key: `DATA_DIR/replica.key` (mode 0600, 64 hex digits),
/// created by `tally init` — or when a data directory made before signing is first opened —
/// and never exported by any command. Only its public half leaves (`tally keys show`).
public struct ReplicaSigningKey: @unchecked Sendable {
    // @unchecked: the key is immutable once made; swift-crypto's type just does not say Sendable.
    let privateKey: Curve25519.Signing.PrivateKey

    /// The public key receivers pin.
    public var publicKey: OriginKey { OriginKey(bytes: privateKey.publicKey.rawRepresentation)! }

    /// A new random key.
    public static func generate() -> ReplicaSigningKey { ReplicaSigningKey(privateKey: Curve25519.Signing.PrivateKey()) }

    /// Reads the key file; nil if there is none. Throws if it is unreadable.
    public static func read(from path: String) throws -> ReplicaSigningKey? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = Hex.decode(text), let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: bytes) else {
            throw LogError.notALog(path: path, reason: "the replica's signing key is unreadable")
        }
        return ReplicaSigningKey(privateKey: key)
    }

    /// The key a writer signs with: `path`, created if missing (a new replica, or a data
    /// directory from before signing: `isNew`). A rotation interrupted by a crash left the new
    /// key at `path.next`: it becomes the key if the log holds the rotation to it, and is
    /// dropped otherwise (the rotation never became durable).
    static func open(at path: String, finishingRotations rotations: [KeyRotation], origin: ReplicaID) throws -> (key: ReplicaSigningKey, isNew: Bool) {
        if let next = try read(from: path + ".next") {
            let current = try read(from: path)?.publicKey
            if rotations.contains(where: { $0.origin == origin && $0.newKey == next.publicKey && $0.oldKey == current && $0.isValid }) {
                guard rename(path + ".next", path) == 0 else { throw LogError.io(operation: "rename", path: path + ".next", errno: errno) }
                try SegmentDirectory.syncDirectory((path as NSString).deletingLastPathComponent)
            } else {
                unlink(path + ".next")
            }
        }
        if let key = try read(from: path) { return (key, false) }
        let key = generate()
        try key.write(to: path)
        return (key, true)
    }

    /// Writes the key file durably, 0600 from its first byte.
    public func write(to path: String) throws {
        try writeDurably(Data((Hex.lowercase(Array(privateKey.rawRepresentation)) + "\n").utf8), to: path, mode: 0o600)
    }

    /// Signs one origin's chain head.
    public func sign(origin: ReplicaID, head: ChainHead) -> SignedHead {
        let message = SignedHead.message(origin: origin, sequence: head.sequence, hash: head.hash)
        let signature = Array((try? privateKey.signature(for: message)) ?? Data())
        return SignedHead(origin: origin, sequence: head.sequence, hash: head.hash, key: publicKey, signature: signature)
    }

    /// Signs the hand-over of `origin` to `next`, after `afterSequence`.
    public func rotation(of origin: ReplicaID, afterSequence: UInt64, to next: ReplicaSigningKey) -> KeyRotation {
        var rotation = KeyRotation(origin: origin, afterSequence: afterSequence, oldKey: publicKey, newKey: next.publicKey, signature: [])
        rotation.signature = Array((try? privateKey.signature(for: rotation.message)) ?? Data())
        return rotation
    }
}

/// Signature records and where they stand in a batch of events: after its first `after` events.
/// A batch written with several points gets a signatures frame at each, so no long run of a
/// stored log waits for a head at its end (a receiver appends a stream only up to a signed head).
public struct SignaturePoint: Sendable, Equatable {
    public var after: Int
    public var records: [SignatureRecord]

    public init(after: Int, records: [SignatureRecord]) {
        (self.after, self.records) = (after, records)
    }

    /// Groups records received among events into points, keeping every rotation and of each
    /// origin's heads the last before each rotation (or the end) plus one at least every
    /// `spacing` events: what a receiver stores and verifies. Dropping a head between kept ones
    /// loses nothing, since the next kept head vouches for the same events through the chain.
    public static func thinned(_ items: [(after: Int, record: SignatureRecord)], spacing: Int) -> [SignaturePoint] {
        var lastOfRun = [Bool](repeating: false, count: items.count)
        var laterHead: Set<ReplicaID> = []
        for position in items.indices.reversed() {
            switch items[position].record {
            case .head(let head):
                lastOfRun[position] = !laterHead.contains(head.origin)
                laterHead.insert(head.origin)
            case .rotation(let rotation):
                laterHead.remove(rotation.origin)
            }
        }
        var points: [SignaturePoint] = []
        var lastKept: [ReplicaID: Int] = [:]
        for (position, item) in items.enumerated() {
            switch item.record {
            case .head(let head):
                if !lastOfRun[position], let kept = lastKept[head.origin], item.after - kept < spacing { continue }
                lastKept[head.origin] = item.after
            case .rotation(let rotation):
                lastKept[rotation.origin] = nil
            }
            if points.last?.after == item.after {
                points[points.count - 1].records.append(item.record)
            } else {
                points.append(SignaturePoint(after: item.after, records: [item.record]))
            }
        }
        return points
    }
}

/// What a signature covers: a domain label, the origin, a u64 LE sequence, then 32 bytes (a
/// head's event hash, a rotation's new key). LOG_FORMAT.md §2.
func signedBytes(label: String, origin: ReplicaID, sequence: UInt64, tail: [UInt8]) -> [UInt8] {
    var out = ByteWriter(capacity: 96)
    out.raw(Array(label.utf8))
    out.uuid(origin.uuid)
    out.u64(sequence)
    out.raw(tail)
    return out.bytes
}
