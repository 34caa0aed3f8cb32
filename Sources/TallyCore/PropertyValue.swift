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
