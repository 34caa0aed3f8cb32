import Foundation
import TallyCore
import TallyLog

/// The `entity_state.state` blob: one entity's merge state — every property's value with the
/// stamp that set it, and the create and delete stamps.
///
/// ```
/// varint version (1) · u8 type · u8 local-only · stamp? created · stamp? deleted ·
/// varint count · per property (code order): u8 code · stamp · stamp? basis · value (EventCodec value encoding)
/// stamp = varint millis · varint counter · 16 bytes origin; stamp? = u8 0 | u8 1 stamp
/// ```
enum EntityStateCodec {
    static func encode(_ entity: LedgerState.Entity) -> [UInt8] {
        var out = ByteWriter(capacity: 64 + entity.properties.count * 48)
        out.varint(1)
        out.u8(entity.type.rawValue)
        out.u8(entity.isLocalOnly ? 1 : 0)
        encodeOptional(entity.created, into: &out)
        encodeOptional(entity.deleted, into: &out)
        let properties = entity.properties.sorted { $0.key < $1.key }
        out.varint(UInt64(properties.count))
        for (name, entry) in properties {
            out.u8(name.rawValue)
            EventCodec.encodeStamp(entry.stamp, into: &out)
            encodeOptional(entry.basis, into: &out)
            EventCodec.encodeValue(entry.value, into: &out)
        }
        return out.bytes
    }

    static func decode(_ bytes: [UInt8], id: EntityID) throws -> LedgerState.Entity {
        try bytes.withUnsafeBytes { buffer in
            var input = ByteReader(buffer)
            guard try input.varint() == 1 else { throw DecodingError.stateVersion }
            guard let type = EntityType(rawValue: try input.u8()) else { throw DecodingError.stateVersion }
            let isLocalOnly = try input.u8() == 1
            let created = try decodeOptional(&input)
            let deleted = try decodeOptional(&input)
            var properties: [PropertyName: LedgerState.PropertyState] = [:]
            for _ in 0..<(try input.varint()) {
                guard let name = PropertyName(rawValue: try input.u8()) else { throw DecodingError.stateVersion }
                let stamp = try EventCodec.decodeStamp(&input)
                let basis = try decodeOptional(&input)
                properties[name] = LedgerState.PropertyState(value: try EventCodec.decodeValue(&input), stamp: stamp, basis: basis)
            }
            return LedgerState.Entity(type: type, id: id, isLocalOnly: isLocalOnly, properties: properties, created: created, deleted: deleted)
        }
    }

    private static func encodeOptional(_ stamp: WriteStamp?, into out: inout ByteWriter) {
        guard let stamp else { return out.u8(0) }
        out.u8(1)
        EventCodec.encodeStamp(stamp, into: &out)
    }

    private static func decodeOptional(_ input: inout ByteReader) throws -> WriteStamp? {
        try input.u8() == 1 ? try EventCodec.decodeStamp(&input) : nil
    }

    enum DecodingError: Error, CustomStringConvertible {
        case stateVersion
        var description: String { "entity_state row written by a newer or damaged build; run 'tally rebuild-projections'" }
    }
}
