/// Values by property, kept sorted by property code: what an event sets (`PropertyMap`) and
/// an entity's merged property states (`PropertyStates`).
///
/// Sorted storage makes the canonical order (the one events are encoded and hashed in) free,
/// equality structural, and encoding a straight walk. An entity has a handful of properties,
/// so finding one by walking a few one-byte codes costs less than hashing its name into a
/// dictionary (which mattered in the bulk-append and first-load profiles), and an event's
/// properties meet an entity's in one merge walk (`LedgerState.Entity.apply`). Reads like a
/// small dictionary.
///
/// Generic code called from another module runs unspecialized (looking up type metadata at
/// run time, which cost a quarter of decoding events), so everything here is `@inlinable`:
/// the decoders and the fold get code specialized for their table.
public struct PropertyTable<Value>: Sequence {
    /// One property and its value.
    public struct Entry {
        public var name: PropertyName
        public var value: Value

        @inlinable public init(name: PropertyName, value: Value) { (self.name, self.value) = (name, value) }
    }

    /// `entries`, which only this type changes (keeping the order).
    @usableFromInline var storage: [Entry] = []

    /// The entries in property-code order, names unique.
    @inlinable public var entries: [Entry] { storage }

    /// No properties.
    @inlinable public init() {}

    /// Builds a table from any (name, value) pairs; later duplicates win.
    @inlinable public init<Pairs: Sequence>(_ pairs: Pairs) where Pairs.Element == (PropertyName, Value) {
        for (name, value) in pairs { self[name] = value }
    }

    /// Appends entries already in strictly increasing code order (decoders); false if they are not.
    @inlinable public mutating func appendInOrder(_ name: PropertyName, _ value: Value) -> Bool {
        if let last = storage.last, last.name >= name { return false }
        storage.append(Entry(name: name, value: value))
        return true
    }

    /// Makes room for `count` entries (decoders know how many follow).
    @inlinable public mutating func reserveCapacity(_ count: Int) { storage.reserveCapacity(count) }

    @inlinable public var count: Int { storage.count }
    @inlinable public var isEmpty: Bool { storage.isEmpty }
    /// Property names in code order.
    @inlinable public var keys: [PropertyName] { storage.map(\.name) }

    /// The position of `name` in `entries`, or of the first entry after it (where it would go),
    /// looking from `start`.
    @inlinable public func position(of name: PropertyName, from start: Int = 0) -> Int {
        var position = start
        while position < storage.count, storage[position].name < name { position += 1 }
        return position
    }

    /// The value of a property, or nil; setting nil removes it.
    @inlinable public subscript(name: PropertyName) -> Value? {
        get {
            let position = position(of: name)
            return position < storage.count && storage[position].name == name ? storage[position].value : nil
        }
        set {
            let position = position(of: name)
            let present = position < storage.count && storage[position].name == name
            switch (newValue, present) {
            case (let value?, true): storage[position].value = value
            case (let value?, false): storage.insert(Entry(name: name, value: value), at: position)
            case (nil, true): storage.remove(at: position)
            case (nil, false): break
            }
        }
    }

    /// Sets the value of the entry at `position` (an index of `entries`).
    @inlinable public mutating func replaceValue(at position: Int, with value: Value) { storage[position].value = value }

    /// Inserts an entry at `position`, which must keep the code order (`position(of:)` gives it).
    @inlinable public mutating func insert(_ name: PropertyName, _ value: Value, at position: Int) {
        storage.insert(Entry(name: name, value: value), at: position)
    }

    @inlinable public func makeIterator() -> some IteratorProtocol<(name: PropertyName, value: Value)> {
        storage.lazy.map { ($0.name, $0.value) }.makeIterator()
    }
}

extension PropertyTable.Entry: Sendable where Value: Sendable {}
extension PropertyTable.Entry: Equatable where Value: Equatable {}
extension PropertyTable.Entry: Hashable where Value: Hashable {}
extension PropertyTable: Sendable where Value: Sendable {}
extension PropertyTable: Equatable where Value: Equatable {}
extension PropertyTable: Hashable where Value: Hashable {}

extension PropertyTable: ExpressibleByDictionaryLiteral {
    @inlinable public init(dictionaryLiteral elements: (PropertyName, Value)...) {
        for (name, value) in elements { self[name] = value }
    }
}

extension PropertyTable: CustomStringConvertible {
    public var description: String {
        "[" + entries.map { "\($0.name): \($0.value)" }.joined(separator: ", ") + "]"
    }
}

/// The properties an event sets.
public typealias PropertyMap = PropertyTable<PropertyValue>

/// An entity's properties, each with the stamp of the write that set it.
public typealias PropertyStates = PropertyTable<LedgerState.PropertyState>

extension PropertyTable where Value == PropertyValue {
    /// This map with `other`'s entries added, `other` winning where both have a property.
    @inlinable public func overlaid(with other: PropertyMap) -> PropertyMap {
        var result = self
        for entry in other.entries { result[entry.name] = entry.value }
        return result
    }
}
