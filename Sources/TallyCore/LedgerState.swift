/// The current state of every entity, folded from events by the merge rules — the reference
/// model the SQL views must agree with.
///
/// Rules (docs/MERGE.md): each property keeps the stamp of the write that set it and a write
/// wins a property iff its stamp is greater; a delete of an expense, category or todo is a
/// tombstone that wins over every write, earlier or later (ids are never reused, so an entity
/// once deleted stays deleted); a setting's key can be reused, so a set stamped after its
/// delete makes it live again. All rules are commutative and idempotent, so any order of the
/// same events gives the same state.
public struct LedgerState: Sendable {
    /// One entity's merged state.
    public struct Entity: Sendable, Equatable {
        /// Its type.
        public var type: EntityType
        /// Its id.
        public var id: EntityID
        /// Local-only (a setting with scope `local`).
        public var isLocalOnly: Bool
        /// Current values with the stamp that set each.
        public var properties: [PropertyName: (value: PropertyValue, stamp: WriteStamp)]
        /// Set once a create has been seen.
        public var created: WriteStamp?
        /// Set once a delete has been seen.
        public var deleted: WriteStamp?

        /// A blank entity for the first event that mentions it.
        public init(first event: Event) {
            self.init(type: event.entityType, id: event.entityID, isLocalOnly: event.isLocalOnly, properties: [:], created: nil, deleted: nil)
        }

        /// Creates an entity from stored state.
        public init(type: EntityType, id: EntityID, isLocalOnly: Bool, properties: [PropertyName: (value: PropertyValue, stamp: WriteStamp)],
                    created: WriteStamp?, deleted: WriteStamp?) {
            self.type = type
            self.id = id
            self.isLocalOnly = isLocalOnly
            self.properties = properties
            self.created = created
            self.deleted = deleted
        }

        /// Applies one event of this entity by the merge rules — the single place they live.
        public mutating func apply(_ event: Event) {
            let stamp = event.stamp
            switch event.operation {
            case .create: created = min(created ?? stamp, stamp)
            case .delete: deleted = max(deleted ?? stamp, stamp)
            case .update: break
            }
            for (name, value) in event.properties where properties[name].map({ $0.stamp < stamp }) ?? true {
                properties[name] = (value, stamp)
            }
        }

        /// Values without stamps.
        public var values: PropertyMap { PropertyMap(properties.map { ($0.key, $0.value.value) }) }

        /// Live: created and not deleted — except that a setting (whose key can be reused) is
        /// live again once a set is stamped later than its delete.
        public var isLive: Bool {
            guard created != nil else { return false }
            guard let deleted else { return true }
            guard type == .setting, let valueStamp = properties[.value]?.stamp else { return false }
            return valueStamp > deleted
        }

        public static func == (lhs: Entity, rhs: Entity) -> Bool {
            lhs.type == rhs.type && lhs.id == rhs.id && lhs.isLocalOnly == rhs.isLocalOnly && lhs.values == rhs.values
                && lhs.properties.mapValues(\.stamp) == rhs.properties.mapValues(\.stamp) && lhs.created == rhs.created && lhs.deleted == rhs.deleted
        }
    }

    /// Every entity ever mentioned, live or not.
    public private(set) var entities: [EntityID: Entity] = [:]

    /// An empty ledger.
    public init() {}

    /// Applies one event by the merge rules.
    public mutating func apply(_ event: Event) {
        var entity = entities[event.entityID] ?? Entity(first: event)
        entity.apply(event)
        entities[event.entityID] = entity
    }

    /// The live entity with this id, if any.
    public func live(_ id: EntityID) -> Entity? {
        guard let entity = entities[id], entity.isLive else { return nil }
        return entity
    }
}
