/// One create, update or delete of one entity, as recorded in the log.
///
/// Everything here is covered by the event's hash. `previousHash` is the hash of the event
/// before it from the same origin (`EventHash.zero` for sequence 1).
public struct Event: Hashable, Sendable {
    /// The format version the event was written with (see `Event.currentSchemaVersion`).
    public var schemaVersion: UInt16
    /// The replica (or local-only chain) that wrote the event.
    public var origin: ReplicaID
    /// 1, 2, 3 … per origin, without gaps.
    public var sequence: UInt64
    /// Hybrid logical clock reading at the origin.
    public var timestamp: HybridTimestamp
    /// Who made the change: a user, token name or tool (`cli:alice`, `token:phone`, …).
    public var actor: String
    /// Local-only events (settings with scope `local`) never leave their replica.
    public var isLocalOnly: Bool
    /// Which kind of entity.
    public var entityType: EntityType
    /// Which entity.
    public var entityID: EntityID
    /// Create, update or delete.
    public var operation: EventOperation
    /// The properties this event sets; empty for deletes. Updates name only what they change.
    public var properties: PropertyMap
    /// Hash of the previous event of the same origin.
    public var previousHash: EventHash
    /// For each property an update sets, the stamp of the value its writer saw (none if it
    /// saw none). Two writes of a property are concurrent — a conflict worth journaling —
    /// when neither one's basis is the other.
    public var basis: [PropertyName: WriteStamp]

    /// The schema version written by this build. Older versions are upcast when read.
    /// Version 2 adds an expense's `payee`; version 3 adds budgets (entity type 5, `fromMonth`,
    /// `toMonth`); version 4 adds imports, rules and rates; version 5 refuses unpaired
    /// directional controls in text (`bidiRuleSchemaVersion`); version 6 adds accounts,
    /// transfers (entity types 10, 11), settlements (12) and an expense's `accountId`, `paidBy`,
    /// `split` and `shares`; version 7 adds split receipts' lines (entity type 13) and an
    /// account's reconciliation (`reconciledThrough`, `statementBalance`). An older event means
    /// the same under the newer version.
    public static let currentSchemaVersion: UInt16 = 7

    /// From this version on, text holds no unpaired directional control (`BidiControls`).
    /// Events of older versions keep what they hold: history is not rewritten, and the web app
    /// and the exports neutralise it where it is shown or leaves as a file.
    public static let bidiRuleSchemaVersion: UInt16 = 5

    /// Creates an event.
    public init(
        schemaVersion: UInt16 = Event.currentSchemaVersion, origin: ReplicaID, sequence: UInt64,
        timestamp: HybridTimestamp, actor: String, isLocalOnly: Bool = false, entityType: EntityType,
        entityID: EntityID, operation: EventOperation, properties: PropertyMap, previousHash: EventHash,
        basis: [PropertyName: WriteStamp] = [:]
    ) {
        self.schemaVersion = schemaVersion
        self.origin = origin
        self.sequence = sequence
        self.timestamp = timestamp
        self.actor = actor
        self.isLocalOnly = isLocalOnly
        self.entityType = entityType
        self.entityID = entityID
        self.operation = operation
        self.properties = properties
        self.previousHash = previousHash
        self.basis = basis
    }

    /// The stamp that decides last-writer-wins races for this event's properties.
    public var stamp: WriteStamp { WriteStamp(timestamp: timestamp, origin: origin) }
}

/// What a caller asks the log to record; the writer adds origin, sequence, clock and chain.
public struct EventDraft: Hashable, Sendable {
    /// Which kind of entity.
    public var entityType: EntityType
    /// Which entity.
    public var entityID: EntityID
    /// Create, update or delete.
    public var operation: EventOperation
    /// Properties to set (only the changed ones for an update; none for a delete).
    public var properties: PropertyMap
    /// Who is making the change.
    public var actor: String
    /// True for settings with scope `local`.
    public var isLocalOnly: Bool
    /// The stamps of the values the writer saw for the properties it sets (see `Event.basis`).
    public var basis: [PropertyName: WriteStamp] = [:]

    /// Creates a draft.
    public init(
        entityType: EntityType, entityID: EntityID, operation: EventOperation,
        properties: PropertyMap = [:], actor: String, isLocalOnly: Bool = false
    ) {
        self.entityType = entityType
        self.entityID = entityID
        self.operation = operation
        self.properties = properties
        self.actor = actor
        self.isLocalOnly = isLocalOnly
    }
}
