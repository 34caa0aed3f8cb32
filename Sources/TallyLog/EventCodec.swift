import CTallyLZ4
import Crypto
import Foundation
import TallyCore

/// The compact binary encoding of one event (format version 1, see docs/LOG_FORMAT.md).
///
/// The encoding is canonical — properties in code order, sets sorted — so an event has exactly
/// one encoding, and its hash (SHA-256 of these bytes) is the same on every replica.
public enum EventCodec {
    /// Longest accepted text field, a bound that keeps hostile input from allocating without limit.
    static let maxFieldBytes = 2 << 20

    /// Encodes an event.
    public static func encode(_ event: Event) -> [UInt8] {
        var out = ByteWriter(capacity: 160)
        encode(event, into: &out)
        return out.bytes
    }

    static func encode(_ event: Event, into out: inout ByteWriter) {
        out.varint(UInt64(event.schemaVersion))
        out.uuid(event.origin.uuid)
        out.varint(event.sequence)
        out.varint(event.timestamp.millis)
        out.varint(UInt64(event.timestamp.counter))
        out.lengthPrefixed(event.actor)
        out.u8(event.isLocalOnly ? 1 : 0)
        out.u8(event.entityType.rawValue)
        out.u8(event.operation.rawValue)
        switch event.entityID {
        case .uuid(let uuid):
            out.u8(0)
            out.uuid(uuid)
        case .settingKey(let key):
            out.u8(1)
            out.lengthPrefixed(key)
        }
        for lane in 0..<4 { out.u64(event.previousHash.words[lane].bigEndian) }
        out.varint(UInt64(event.properties.count))
        for (name, value) in event.properties {
            out.u8(name.rawValue)
            encodeValue(value, into: &out)
        }
        out.varint(UInt64(event.basis.count))
        for (name, stamp) in event.basis.sorted(by: { $0.key < $1.key }) {
            out.u8(name.rawValue)
            encodeStamp(stamp, into: &out)
        }
    }

    /// A write stamp: varint milliseconds, varint counter, 16 bytes origin.
    public static func encodeStamp(_ stamp: WriteStamp, into out: inout ByteWriter) {
        out.varint(stamp.timestamp.millis)
        out.varint(UInt64(stamp.timestamp.counter))
        out.uuid(stamp.origin.uuid)
    }

    /// Reads what `encodeStamp` wrote.
    public static func decodeStamp(_ input: inout ByteReader) throws(DecodingError) -> WriteStamp {
        let millis = try input.varint()
        let counter = try input.varint()
        guard counter <= UInt64(UInt32.max) else { throw DecodingError("clock counter out of range") }
        return WriteStamp(timestamp: HybridTimestamp(millis: millis, counter: UInt32(counter)), origin: ReplicaID(try input.uuid()))
    }

    /// Appends one property value: its tag, then its payload.
    public static func encodeValue(_ value: PropertyValue, into out: inout ByteWriter) {
        out.u8(value.tag)
        switch value {
        case .null: break
        case .bool(let flag): out.u8(flag ? 1 : 0)
        case .int(let number): out.signedVarint(number)
        case .string(let text), .json(let text): out.lengthPrefixed(text)
        case .uuid(let uuid): out.uuid(uuid)
        case .dateTime(let date):
            out.signedVarint(date.epochMillis)
            out.signedVarint(Int64(date.offsetMinutes))
        case .strings(let texts):
            out.varint(UInt64(texts.count))
            for text in texts { out.lengthPrefixed(text) }
        case .bools(let flags):
            out.varint(UInt64(flags.count))
            var byte: UInt8 = 0
            for (index, flag) in flags.enumerated() {
                if flag { byte |= 1 << UInt8(index % 8) }
                if index % 8 == 7 { out.u8(byte); byte = 0 }
            }
            if flags.count % 8 != 0 { out.u8(byte) }
        }
    }

    /// Where an event comes from, read from the start of its encoding without decoding the
    /// rest: what an export needs to decide whether a peer lacks it.
    public struct Routing: Sendable {
        public var origin: ReplicaID
        public var sequence: UInt64
        public var isLocalOnly: Bool
    }

    /// An origin's sequence runs from 1 and counts its events, so it is at most the largest log
    /// index: a larger one (from a peer, a bundle, an archive, a damaged disk) would wrap the
    /// `+ 1` that names the next event of its chain.
    static func checkSequence(_ sequence: UInt64) throws(DecodingError) {
        guard sequence >= 1 else { throw DecodingError("sequence 0 is not allowed") }
        guard sequence <= SegmentFormat.maxLogIndex else { throw DecodingError("sequence \(sequence) is past the largest, \(SegmentFormat.maxLogIndex)") }
    }

    /// The routing fields of an encoded event (schema version 1 layout, which later versions keep).
    public static func routing(_ bytes: UnsafeRawBufferPointer) throws(DecodingError) -> Routing {
        var input = ByteReader(bytes)
        _ = try input.varint()
        let origin = ReplicaID(try input.uuid())
        let sequence = try input.varint()
        try checkSequence(sequence)
        _ = try input.varint()
        _ = try input.varint()
        _ = try input.take(try input.length(max: Limits.maxActorBytes))
        return Routing(origin: origin, sequence: sequence, isLocalOnly: try input.u8() & 1 == 1)
    }

    /// Decodes one event occupying all of `bytes`, upcasting older schema versions.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(DecodingError) -> Event {
        var input = ByteReader(bytes)
        let version = try input.varint()
        guard version >= 1, version <= UInt64(Event.currentSchemaVersion) else {
            throw DecodingError(
                version > UInt64(Event.currentSchemaVersion)
                    ? "event schema version \(version) was written by a newer Tally (this build reads 1…\(Event.currentSchemaVersion)); upgrade this replica, then receive it again"
                    : "event schema version 0 does not exist")
        }
        let origin = ReplicaID(try input.uuid())
        let sequence = try input.varint()
        try checkSequence(sequence)
        let millis = try input.varint()
        let counter = try input.varint()
        guard counter <= UInt64(UInt32.max) else { throw DecodingError("clock counter out of range") }
        let actor = try input.string(maxBytes: Limits.maxActorBytes)
        let flags = try input.u8()
        guard flags <= 1 else { throw DecodingError("unknown event flags \(flags)") }
        guard let entityType = EntityType(rawValue: try input.u8()) else { throw DecodingError("unknown entity type") }
        guard let operation = EventOperation(rawValue: try input.u8()) else { throw DecodingError("unknown operation") }
        let entityID: EntityID
        switch try input.u8() {
        case 0: entityID = .uuid(try input.uuid())
        case 1: entityID = .settingKey(try input.string(maxBytes: Limits.maxSettingKeyBytes))
        default: throw DecodingError("unknown entity id tag")
        }
        let hashBytes = try input.take(32)
        let previousHash = EventHash(bytes: hashBytes)
        let count = try input.length(max: PropertyName.allCases.count)
        var properties = PropertyMap()
        properties.reserveCapacity(count)
        for _ in 0..<count {
            let code = try input.u8()
            guard let name = PropertyName(rawValue: code), properties.appendInOrder(name, try decodeValue(&input)) else {
                throw DecodingError("property code \(code) unknown or out of order")
            }
        }
        var basis: [PropertyName: WriteStamp] = [:]
        var lastBasisCode: UInt8 = 0
        for _ in 0..<(try input.length(max: PropertyName.allCases.count)) {
            let code = try input.u8()
            guard code > lastBasisCode, let name = PropertyName(rawValue: code), properties[name] != nil else {
                throw DecodingError("basis code \(code) unknown, out of order, or for a property the event does not set")
            }
            lastBasisCode = code
            basis[name] = try decodeStamp(&input)
        }
        guard input.atEnd else { throw DecodingError("\(input.remaining) unexpected bytes after the event") }
        let event = Event(
            schemaVersion: UInt16(version), origin: origin, sequence: sequence,
            timestamp: HybridTimestamp(millis: millis, counter: UInt32(counter)), actor: actor,
            isLocalOnly: flags == 1, entityType: entityType, entityID: entityID, operation: operation,
            properties: properties, previousHash: previousHash, basis: basis)
        return EventUpcaster.upcast(event)
    }

    /// Reads one property value written by `encodeValue`.
    public static func decodeValue(_ input: inout ByteReader) throws(DecodingError) -> PropertyValue {
        switch try input.u8() {
        case 0: return .null
        case 1:
            let byte = try input.u8()
            guard byte <= 1 else { throw DecodingError("boolean byte \(byte)") }
            return .bool(byte == 1)
        case 2: return .int(try input.signedVarint())
        case 3: return .string(try input.string(maxBytes: maxFieldBytes))
        case 4: return .uuid(try input.uuid())
        case 5:
            let millis = try input.signedVarint()
            let offset = try input.signedVarint()
            guard (-18 * 60...18 * 60).contains(offset) else { throw DecodingError("UTC offset \(offset) minutes out of range") }
            return .dateTime(DateTime(epochMillis: millis, offsetMinutes: Int16(offset)))
        case 6:
            let count = try input.length(max: 4096)
            var texts: [String] = []
            for _ in 0..<count { texts.append(try input.string(maxBytes: maxFieldBytes)) }
            return .strings(texts)
        case 7:
            let declared = try input.varint()
            guard declared <= UInt64(Limits.maxChecks * 16) else { throw DecodingError("\(declared) booleans is more than any todo holds") }
            let count = Int(declared)
            let packed = try input.take((count + 7) / 8)
            if count % 8 != 0, packed[packed.count - 1] >> UInt8(count % 8) != 0 {
                throw DecodingError("padding bits set after the last boolean (non-canonical encoding)")
            }
            return .bools((0..<count).map { packed[$0 / 8] & (1 << UInt8($0 % 8)) != 0 })
        case 8: return .json(try input.string(maxBytes: maxFieldBytes))
        case let tag: throw DecodingError("unknown value tag \(tag)")
        }
    }

    /// Decodes an event held in an array.
    public static func decode(_ bytes: [UInt8]) throws -> Event {
        try bytes.withUnsafeBytes { try decode($0) }
    }

    /// SHA-256 of an event's encoding: what its successor from the same origin names as `previousHash`.
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> EventHash {
        withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { digest in
            let out = digest.baseAddress!.assumingMemoryBound(to: UInt8.self)
            _ = CCryptoBoringSSL_SHA256(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(out), bytes.count, out)
            return EventHash(bytes: UnsafeRawBufferPointer(digest))
        }
    }

    /// SHA-256 of an encoded event held in an array.
    public static func hash(_ bytes: [UInt8]) -> EventHash {
        bytes.withUnsafeBytes { hash($0) }
    }
}

/// Lifts events written by older schema versions to the current one when they are read.
///
/// History is never rewritten: the stored bytes (and so the hash chain) stay as written, and
/// every reader sees the current shape. One case per older version, mapping it to the next:
///
/// - 1 → 2: version 2 added the expense field `payee`; a version-1 event cannot set it
///   (`FieldSpec.since`), so it means the same under version 2 and is kept as it is.
/// - 4 → 5: version 5 refuses text holding an unpaired directional control (U+202A–202E,
///   U+2066–2069; `BidiControls`). A version-4 event may hold one, and is kept as it is: its
///   bytes are hashed and signed, and its values are still checked by the version-4 rules
///   (`EntitySchema.checkIncoming` reads the event's own version). What it holds is made
///   harmless where text is shown — the web app isolates every user text (`<bdi>`) — and where
///   it leaves for a spreadsheet (the CSV export drops unpaired controls; the JSON Lines
///   export is the data as it is).
public enum EventUpcaster {
    /// Returns `event` in the current schema's terms.
    public static func upcast(_ event: Event) -> Event {
        switch event.schemaVersion {
        case 1: event  // 1 → 2: nothing to lift (see above)
        default: event
        }
    }
}
