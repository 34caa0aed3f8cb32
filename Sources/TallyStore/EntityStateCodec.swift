import Foundation
import TallyCore
import TallyLog

/// The `entity_state.state` blob: one entity's merge state — every property's value with the
/// stamp that set it, and the create and delete stamps.
///
/// ```
/// varint version (1) · u8 type · u8 local-only · stamp? created · stamp? deleted ·
/// varint count · per property (code order): u8 code · stamp · value (EventCodec value encoding)
/// stamp = varint millis · varint counter · 16 bytes origin; stamp? = u8 0 | u8 1 stamp
/// ```
enum EntityStateCodec {
    static func encode(_ entity: LedgerState.Entity) -> [UInt8] {
        var out = ByteWriter(capacity: 64 + entity.properties.count * 48)
        out.varint(1)
        out.u8(entity.type.rawValue)
        out.u8(entity.isLocalOnly ? 1 : 0)
        for stamp in [entity.created, entity.deleted] {
            if let stamp {
                out.u8(1)
                encode(stamp, into: &out)
            } else {
                out.u8(0)
            }
        }
        let properties = entity.properties.sorted { $0.key < $1.key }
        out.varint(UInt64(properties.count))
        for (name, entry) in properties {
            out.u8(name.rawValue)
            encode(entry.stamp, into: &out)
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
            var stamps: [WriteStamp?] = []
            for _ in 0..<2 { stamps.append(try input.u8() == 1 ? try decodeStamp(&input) : nil) }
            var properties: [PropertyName: (value: PropertyValue, stamp: WriteStamp)] = [:]
            for _ in 0..<(try input.varint()) {
                guard let name = PropertyName(rawValue: try input.u8()) else { throw DecodingError.stateVersion }
                let stamp = try decodeStamp(&input)
                properties[name] = (try EventCodec.decodeValue(&input), stamp)
            }
            return LedgerState.Entity(type: type, id: id, isLocalOnly: isLocalOnly, properties: properties, created: stamps[0], deleted: stamps[1])
        }
    }

    private static func encode(_ stamp: WriteStamp, into out: inout ByteWriter) {
        out.varint(stamp.timestamp.millis)
        out.varint(UInt64(stamp.timestamp.counter))
        out.uuid(stamp.origin.uuid)
    }

    private static func decodeStamp(_ input: inout ByteReader) throws -> WriteStamp {
        let millis = try input.varint()
        let counter = try input.varint()
        return WriteStamp(timestamp: HybridTimestamp(millis: millis, counter: UInt32(truncatingIfNeeded: counter)), origin: ReplicaID(try input.uuid()))
    }

    enum DecodingError: Error, CustomStringConvertible {
        case stateVersion
        var description: String { "entity_state row written by a newer or damaged build; run 'tally rebuild-projections'" }
    }
}
