/// The properties an event sets, kept sorted by property code.
///
/// Sorted storage makes the canonical order (the one events are encoded and hashed in) free,
/// equality structural, and encoding a straight walk — no hashing per property, which mattered
/// in the bulk-append profile. Reads like a small dictionary.
public struct PropertyMap: Hashable, Sendable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One property and its value.
    public struct Entry: Hashable, Sendable {
        public var name: PropertyName
        public var value: PropertyValue
    }

    /// The entries in property-code order, names unique.
    public private(set) var entries: [Entry] = []

    /// No properties.
    public init() {}

    public init(dictionaryLiteral elements: (PropertyName, PropertyValue)...) {
        for (name, value) in elements { self[name] = value }
    }

    /// Builds a map from any (name, value) pairs; later duplicates win.
    public init<Pairs: Sequence>(_ pairs: Pairs) where Pairs.Element == (PropertyName, PropertyValue) {
        for (name, value) in pairs { self[name] = value }
    }

    /// Appends entries already in strictly increasing code order (decoders); false if they are not.
    public mutating func appendInOrder(_ name: PropertyName, _ value: PropertyValue) -> Bool {
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

    /// The value of a property, or nil; setting nil removes it.
    public subscript(name: PropertyName) -> PropertyValue? {
        get {
            for entry in entries where entry.name >= name { return entry.name == name ? entry.value : nil }
            return nil
        }
        set {
            let position = entries.firstIndex { $0.name >= name } ?? entries.endIndex
            let present = position < entries.endIndex && entries[position].name == name
            switch (newValue, present) {
            case (let value?, true): entries[position].value = value
            case (let value?, false): entries.insert(Entry(name: name, value: value), at: position)
            case (nil, true): entries.remove(at: position)
            case (nil, false): break
            }
        }
    }

    /// This map with `other`'s entries added, `other` winning where both have a property.
    public func overlaid(with other: PropertyMap) -> PropertyMap {
        var result = self
        for entry in other.entries { result[entry.name] = entry.value }
        return result
    }

    public func makeIterator() -> some IteratorProtocol<(name: PropertyName, value: PropertyValue)> {
        entries.lazy.map { ($0.name, $0.value) }.makeIterator()
    }

    public var description: String {
        "[" + entries.map { "\($0.name): \($0.value)" }.joined(separator: ", ") + "]"
    }
}
