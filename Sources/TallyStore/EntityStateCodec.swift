import Foundation
import TallyCore
import TallyLog

/// The `entity_state.state` blob: one entity's merge state — every property's value with the
/// stamp that set it (and the basis that write saw), and the create and delete stamps.
///
/// ```
/// varint version (2) · u8 type · u8 local-only ·
/// varint origin count · 16 bytes per origin ·
/// varint stamp count · per stamp, ascending: varint millis minus the previous stamp's (the
///     first: minus 0) · varint counter · varint origin position ·
/// varint created · varint deleted                      (0 = none, else stamp position + 1) ·
/// varint property count · per property (code order): u8 code · varint stamp position ·
///     varint basis (0 = none, else stamp position + 1) · value (EventCodec value encoding)
/// ```
///
/// Each stamp is written once per entity and referenced by position: an expense's ten or so
/// properties share the two or three writes that set them, so this is less than half the
/// size of writing a 26-byte stamp beside every property (version 1, which migration 0004
/// retired by re-projecting the views). The bytes are canonical — stamps sorted, properties
/// in code order — so equal states give equal blobs on every replica.
enum EntityStateCodec {
    static let version: UInt64 = 2

    static func encode(_ entity: LedgerState.Entity) -> [UInt8] {
        let properties = entity.properties
        var stamps: [WriteStamp] = []
        func note(_ stamp: WriteStamp?) { if let stamp, !stamps.contains(stamp) { stamps.append(stamp) } }
        note(entity.created)
        note(entity.deleted)
        for entry in properties.entries {
            note(entry.value.stamp)
            note(entry.value.basis)
        }
        stamps.sort()
        var origins: [ReplicaID] = []
        for stamp in stamps where !origins.contains(stamp.origin) { origins.append(stamp.origin) }
        func position(_ stamp: WriteStamp) -> UInt64 { UInt64(stamps.firstIndex(of: stamp)!) }
        func optionalPosition(_ stamp: WriteStamp?) -> UInt64 { stamp.map { position($0) + 1 } ?? 0 }

        var out = ByteWriter(capacity: 48 + origins.count * 16 + stamps.count * 10 + properties.count * 16)
        out.varint(version)
        out.u8(entity.type.rawValue)
        out.u8(entity.isLocalOnly ? 1 : 0)
        out.varint(UInt64(origins.count))
        for origin in origins { out.uuid(origin.uuid) }
        out.varint(UInt64(stamps.count))
        var previousMillis: UInt64 = 0
        for stamp in stamps {
            out.varint(stamp.timestamp.millis - previousMillis)
            out.varint(UInt64(stamp.timestamp.counter))
            out.varint(UInt64(origins.firstIndex(of: stamp.origin)!))
            previousMillis = stamp.timestamp.millis
        }
        out.varint(optionalPosition(entity.created))
        out.varint(optionalPosition(entity.deleted))
        out.varint(UInt64(properties.count))
        for entry in properties.entries {
            out.u8(entry.name.rawValue)
            out.varint(position(entry.value.stamp))
            out.varint(optionalPosition(entry.value.basis))
            EventCodec.encodeValue(entry.value.value, into: &out)
        }
        return out.bytes
    }

    static func decode(_ bytes: [UInt8], id: EntityID) throws -> LedgerState.Entity {
        do {
            return try bytes.withUnsafeBytes { buffer in
                var input = ByteReader(buffer)
                guard try input.varint() == version else { throw DecodingError.stateVersion }
                guard let type = EntityType(rawValue: try input.u8()) else { throw DecodingError.stateVersion }
                let isLocalOnly = try input.u8() == 1
                var origins: [ReplicaID] = []
                for _ in 0..<(try count(&input)) { origins.append(ReplicaID(try input.uuid())) }
                var stamps: [WriteStamp] = []
                var millis: UInt64 = 0
                for _ in 0..<(try count(&input)) {
                    let (sum, overflow) = millis.addingReportingOverflow(try input.varint())
                    let counter = try input.varint()
                    let origin = try input.varint()
                    guard !overflow, counter <= UInt64(UInt32.max), origin < origins.count else { throw DecodingError.stateVersion }
                    millis = sum
                    stamps.append(WriteStamp(timestamp: HybridTimestamp(millis: millis, counter: UInt32(counter)), origin: origins[Int(origin)]))
                }
                func stamp(_ position: UInt64) throws -> WriteStamp {
                    guard position < stamps.count else { throw DecodingError.stateVersion }
                    return stamps[Int(position)]
                }
                func optionalStamp() throws -> WriteStamp? {
                    let position = try input.varint()
                    return position == 0 ? nil : try stamp(position - 1)
                }
                let created = try optionalStamp()
                let deleted = try optionalStamp()
                var properties = PropertyStates()
                let propertyCount = try count(&input)
                properties.reserveCapacity(propertyCount)
                for _ in 0..<propertyCount {
                    guard let name = PropertyName(rawValue: try input.u8()) else { throw DecodingError.stateVersion }
                    let written = try stamp(try input.varint())
                    let basis = try optionalStamp()
                    let state = LedgerState.PropertyState(value: try EventCodec.decodeValue(&input), stamp: written, basis: basis)
                    guard properties.appendInOrder(name, state) else { throw DecodingError.stateVersion }  // the encoder writes code order
                }
                return LedgerState.Entity(type: type, id: id, isLocalOnly: isLocalOnly, properties: properties, created: created, deleted: deleted)
            }
        } catch is TallyLog.DecodingError {
            throw DecodingError.stateVersion
        }
    }

    /// A count that cannot exceed what the remaining bytes could hold (one byte per item at least).
    private static func count(_ input: inout ByteReader) throws -> Int {
        let count = try input.varint()
        guard count <= UInt64(input.remaining) else { throw DecodingError.stateVersion }
        return Int(count)
    }

    enum DecodingError: Error, CustomStringConvertible {
        case stateVersion
        var description: String { "entity_state row written by a different or damaged build; run 'tally rebuild-projections'" }
    }
}
