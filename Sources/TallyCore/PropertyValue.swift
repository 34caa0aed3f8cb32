import Foundation

/// The value an event sets a property to. The case tags are written to disk: never renumber.
public enum PropertyValue: Hashable, Sendable {
    /// Clears an optional property (a category's parent, an expense's category, …).
    case null
    case bool(Bool)
    case int(Int64)
    case string(String)
    case uuid(UUID)
    case dateTime(DateTime)
    /// A set of strings (tags, attachment hashes), kept sorted and without duplicates.
    case strings([String])
    /// An ordered list of booleans (a todo's checks).
    case bools([Bool])
    /// Canonical JSON text (a setting's value).
    case json(String)

    /// The on-disk tag of the case.
    public var tag: UInt8 {
        switch self {
        case .null: 0
        case .bool: 1
        case .int: 2
        case .string: 3
        case .uuid: 4
        case .dateTime: 5
        case .strings: 6
        case .bools: 7
        case .json: 8
        }
    }
}

/// The properties an event sets, in a canonical order (by property code).
public typealias PropertyMap = [PropertyName: PropertyValue]

extension Dictionary where Key == PropertyName, Value == PropertyValue {
    /// Entries sorted by property code: the order used for encoding and hashing.
    public var canonicallyOrdered: [(key: PropertyName, value: PropertyValue)] {
        sorted { $0.key < $1.key }
    }

    /// Calls `body` for each entry in property-code order. Hot (every event encoded goes
    /// through it), so it insertion-sorts dictionary indices on the stack: no allocation and
    /// no re-hashing.
    @inlinable
    public func forEachCanonically(_ body: (PropertyName, PropertyValue) throws -> Void) rethrows {
        try withUnsafeTemporaryAllocation(of: Index.self, capacity: count) { order in
            var filled = 0
            for index in indices {
                var position = filled
                while position > 0, self[order[position - 1]].key > self[index].key {
                    order.initializeElement(at: position, to: order[position - 1])
                    position -= 1
                }
                order.initializeElement(at: position, to: index)
                filled += 1
            }
            for index in order.prefix(filled) { try body(self[index].key, self[index].value) }
        }
    }
}
