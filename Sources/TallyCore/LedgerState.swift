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
    /// A property's current value, the stamp of the write that set it, and what that write saw.
    public struct PropertyState: Sendable, Equatable {
        public var value: PropertyValue
        public var stamp: WriteStamp
        /// The stamp of the value the winning write's author saw (its `Event.basis`).
        public var basis: WriteStamp?

        public init(value: PropertyValue, stamp: WriteStamp, basis: WriteStamp?) {
            (self.value, self.stamp, self.basis) = (value, stamp, basis)
        }
    }

    /// Two concurrent writes of one property — neither saw the other — and which one lost.
    public struct Conflict: Sendable, Equatable {
        public var property: PropertyName
        public var losingValue: PropertyValue
        public var loser: WriteStamp
        public var winningValue: PropertyValue
        public var winner: WriteStamp

        public init(property: PropertyName, losingValue: PropertyValue, loser: WriteStamp, winningValue: PropertyValue, winner: WriteStamp) {
            (self.property, self.losingValue, self.loser, self.winningValue, self.winner) = (property, losingValue, loser, winningValue, winner)
        }
    }

    /// One entity's merged state.
    public struct Entity: Sendable, Equatable {
        /// Its type.
        public var type: EntityType
        /// Its id.
        public var id: EntityID
        /// Local-only (a setting with scope `local`).
        public var isLocalOnly: Bool
        /// Current values with the stamp that set each.
        public var properties: PropertyStates
        /// Set once a create has been seen.
        public var created: WriteStamp?
        /// Set once a delete has been seen.
        public var deleted: WriteStamp?

        /// A blank entity for the first event that mentions it.
        public init(first event: Event) {
            self.init(type: event.entityType, id: event.entityID, isLocalOnly: event.isLocalOnly, properties: PropertyStates(), created: nil, deleted: nil)
        }

        /// Creates an entity from stored state.
        public init(
            type: EntityType, id: EntityID, isLocalOnly: Bool, properties: PropertyStates,
            created: WriteStamp?, deleted: WriteStamp?
        ) {
            (self.type, self.id, self.isLocalOnly, self.properties) = (type, id, isLocalOnly, properties)
            (self.created, self.deleted) = (created, deleted)
        }

        /// Applies one event of this entity by the merge rules — the single place they live —
        /// and returns the conflicts it revealed: properties where it and the current value were
        /// written concurrently (different origins, neither's basis the other).
        ///
        /// The merged state is the same in any order; which conflicts an arrival reveals depends
        /// on what had arrived before, so the journal is what this replica observed, not part of
        /// the converged views.
        @discardableResult
        public mutating func apply(_ event: Event) -> [Conflict] {
            var conflicts: [Conflict] = []
            let stamp = event.stamp
            switch event.operation {
            case .create: created = min(created ?? stamp, stamp)
            case .delete: deleted = max(deleted ?? stamp, stamp)
            case .update: break
            }
            // Room for a first event's properties at once. Not for later ones: most of their
            // properties are already here, and reserving count + new would regrow the array.
            if properties.isEmpty { properties.reserveCapacity(event.properties.count) }
            // Both are in code order, so one walk finds every property's place.
            var position = 0
            for (name, value) in event.properties {
                // Most events carry no basis; skip hashing the name into an empty map.
                let basis = event.basis.isEmpty ? nil : event.basis[name]
                position = properties.position(of: name, from: position)
                defer { position += 1 }
                guard position < properties.count, properties.entries[position].name == name else {
                    properties.insert(name, PropertyState(value: value, stamp: stamp, basis: basis), at: position)
                    continue
                }
                let current = properties.entries[position].value
                // Concurrent writes of the same value overwrite nothing: not a conflict (two
                // replicas that materialised the same recurring occurrence, for instance).
                if current.stamp.origin != stamp.origin, basis != current.stamp, current.basis != stamp, current.value != value {
                    conflicts.append(
                        current.stamp < stamp
                            ? Conflict(property: name, losingValue: current.value, loser: current.stamp, winningValue: value, winner: stamp)
                            : Conflict(property: name, losingValue: value, loser: stamp, winningValue: current.value, winner: current.stamp))
                }
                if current.stamp < stamp { properties.replaceValue(at: position, with: PropertyState(value: value, stamp: stamp, basis: basis)) }
            }
            return conflicts
        }

        /// The current value of one property, if set.
        public func value(_ name: PropertyName) -> PropertyValue? { properties[name]?.value }

        /// Values without stamps.
        public var values: PropertyMap {
            var values = PropertyMap()
            values.reserveCapacity(properties.count)
            for entry in properties.entries { _ = values.appendInOrder(entry.name, entry.value.value) }
            return values
        }

        /// The stamp of each current value: the basis of a write that changes it.
        public var stamps: [PropertyName: WriteStamp] {
            Dictionary(uniqueKeysWithValues: properties.entries.map { ($0.name, $0.value.stamp) })
        }

        /// Live: created and not deleted — except that a setting (whose key can be reused) is
        /// live again once a set is stamped later than its delete.
        public var isLive: Bool {
            guard created != nil else { return false }
            guard let deleted else { return true }
            guard type == .setting, let valueStamp = properties[.value]?.stamp else { return false }
            return valueStamp > deleted
        }
    }

    /// Every entity ever mentioned, live or not.
    public private(set) var entities: [EntityID: Entity] = [:]
    /// Conflicts observed while applying, per entity, in the order found.
    public private(set) var conflicts: [EntityID: [Conflict]] = [:]

    /// An empty ledger.
    public init() {}

    /// Makes room for `count` entities (a fold of a log of as many events).
    public mutating func reserveCapacity(_ count: Int) { entities.reserveCapacity(count) }

    /// Applies one event by the merge rules.
    public mutating func apply(_ event: Event) {
        // In place (the `default:` subscript): copying the entity out and back would copy its
        // property dictionary on every event.
        let found = entities[event.entityID, default: Entity(first: event)].apply(event)
        if !found.isEmpty { conflicts[event.entityID, default: []] += found }
    }

    /// The live entity with this id, if any.
    public func live(_ id: EntityID) -> Entity? {
        guard let entity = entities[id], entity.isLive else { return nil }
        return entity
    }
}
