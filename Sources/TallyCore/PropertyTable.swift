/// Values by property, kept sorted by property code: what an event sets (`PropertyMap`) and
/// an entity's merged property states (`PropertyStates`).
///
/// Sorted storage makes the canonical order (the one events are encoded and hashed in) free,
/// equality structural, and encoding a straight walk. An entity has a handful of properties,
/// so finding one by walking a few one-byte codes costs less than hashing its name into a
/// dictionary (which mattered in the bulk-append and first-load profiles), and an event's
/// properties meet an entity's in one merge walk (`LedgerState.Entity.apply`). Reads like a
/// small dictionary.
public struct PropertyTable<Value>: Sequence {
    /// One property and its value.
    public struct Entry {
        public var name: PropertyName
        public var value: Value
    }

    /// The entries in property-code order, names unique.
    public private(set) var entries: [Entry] = []

    /// No properties.
    public init() {}

    /// Builds a table from any (name, value) pairs; later duplicates win.
    public init<Pairs: Sequence>(_ pairs: Pairs) where Pairs.Element == (PropertyName, Value) {
        for (name, value) in pairs { self[name] = value }
    }

    /// Appends entries already in strictly increasing code order (decoders); false if they are not.
    public mutating func appendInOrder(_ name: PropertyName, _ value: Value) -> Bool {
        if let last = entries.last, last.name >= name { return false }
        entries.append(Entry(name: name, value: value))
        return true
    }

    /// Makes room for `count` entries (decoders know how many follow).
    public mutating func reserveCapacity(_ count: Int) { entries.reserveCapacity(count) }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }
    /// Property names in code order.
    public var keys: [PropertyName] { entries.map(\.name) }

    /// The position of `name` in `entries`, or of the first entry after it (where it would go),
    /// looking from `start`.
    public func position(of name: PropertyName, from start: Int = 0) -> Int {
        var position = start
        while position < entries.count, entries[position].name < name { position += 1 }
        return position
    }

    /// The value of a property, or nil; setting nil removes it.
    public subscript(name: PropertyName) -> Value? {
        get {
            let position = position(of: name)
            return position < entries.count && entries[position].name == name ? entries[position].value : nil
        }
        set {
            let position = position(of: name)
            let present = position < entries.count && entries[position].name == name
            switch (newValue, present) {
            case (let value?, true): entries[position].value = value
            case (let value?, false): entries.insert(Entry(name: name, value: value), at: position)
            case (nil, true): entries.remove(at: position)
            case (nil, false): break
            }
        }
    }

    /// Sets the value of the entry at `position` (an index of `entries`).
    public mutating func replaceValue(at position: Int, with value: Value) { entries[position].value = value }

    /// Inserts an entry at `position`, which must keep the code order (`position(of:)` gives it).
    public mutating func insert(_ name: PropertyName, _ value: Value, at position: Int) {
        entries.insert(Entry(name: name, value: value), at: position)
    }

    public func makeIterator() -> some IteratorProtocol<(name: PropertyName, value: Value)> {
        entries.lazy.map { ($0.name, $0.value) }.makeIterator()
    }
}

extension PropertyTable.Entry: Sendable where Value: Sendable {}
extension PropertyTable.Entry: Equatable where Value: Equatable {}
extension PropertyTable.Entry: Hashable where Value: Hashable {}
extension PropertyTable: Sendable where Value: Sendable {}
extension PropertyTable: Equatable where Value: Equatable {}
extension PropertyTable: Hashable where Value: Hashable {}

extension PropertyTable: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (PropertyName, Value)...) {
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
    public func overlaid(with other: PropertyMap) -> PropertyMap {
        var result = self
        for entry in other.entries { result[entry.name] = entry.value }
        return result
    }
}
