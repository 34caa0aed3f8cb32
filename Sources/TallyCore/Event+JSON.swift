/// Events as people read them: one JSON object with the field names used throughout Tally.
extension Event {
    /// The event as a JSON object; `index` and `hash` come from where it is stored.
    public func json(index: UInt64, hash: EventHash) -> JSONText {
        .object([
            ("index", .int(Int64(clamping: index))),
            ("origin", .string(origin.description)),
            ("sequence", .int(Int64(clamping: sequence))),
            ("hlc", .string(timestamp.description)),
            ("time", .string(timestamp.wallTime)),
            ("actor", .string(actor)),
            ("localOnly", .bool(isLocalOnly)),
            ("entityType", .string(entityType.description)),
            ("entityId", .string(entityID.description)),
            ("operation", .string(operation.description)),
            ("properties", .object(properties.map { ($0.name.jsonName, $0.value.json) })),
            ("schemaVersion", .int(Int64(schemaVersion))),
            ("previousHash", .string(previousHash.description)),
            ("hash", .string(hash.description)),
        ])
    }

    /// `name=value, …` of the properties the event set, or `(deleted)`.
    public var changeSummary: String {
        if operation == .delete { return "(deleted)" }
        return properties.map { "\($0.name.jsonName)=\($0.value.display)" }.joined(separator: ", ")
    }
}

extension HybridTimestamp {
    /// The physical part as UTC ISO 8601.
    public var wallTime: String {
        DateTime(epochMillis: Int64(clamping: millis), offsetMinutes: 0).description
    }
}
