import Foundation
import TallyCore
import TallyLog

/// Events as people read them: one JSON object, or one line of a history table.
enum EventJSON {
    static func render(_ logged: LoggedEvent) -> JSONText {
        let event = logged.event
        return .object([
            ("index", .int(Int64(logged.index))),
            ("origin", .string(event.origin.description)),
            ("sequence", .int(Int64(event.sequence))),
            ("hlc", .string(event.timestamp.description)),
            ("time", .string(wallTime(event.timestamp))),
            ("actor", .string(event.actor)),
            ("localOnly", .bool(event.isLocalOnly)),
            ("entityType", .string(event.entityType.description)),
            ("entityId", .string(event.entityID.description)),
            ("operation", .string(event.operation.description)),
            ("properties", .object(event.properties.canonicallyOrdered.map { ($0.key.jsonName, $0.value.json) })),
            ("schemaVersion", .int(Int64(event.schemaVersion))),
            ("previousHash", .string(event.previousHash.description)),
            ("hash", .string(logged.hash.description)),
        ])
    }

    /// The clock reading's physical part as UTC ISO 8601.
    static func wallTime(_ timestamp: HybridTimestamp) -> String {
        DateTime(epochMillis: Int64(clamping: timestamp.millis), offsetMinutes: 0).description
    }

    /// `name=value, …` of the properties an event set.
    static func changes(_ event: Event) -> String {
        if event.operation == .delete { return "(deleted)" }
        return event.properties.canonicallyOrdered.map { "\($0.key.jsonName)=\($0.value.display)" }.joined(separator: ", ")
    }
}
