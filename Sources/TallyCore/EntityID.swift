import Foundation

/// How an event names its entity: expenses, categories and todos by UUID, settings by key.
public enum EntityID: Hashable, Sendable, CustomStringConvertible {
    case uuid(UUID)
    case settingKey(String)

    /// The id as people type it: lowercase UUID, or the setting key.
    public var description: String {
        switch self {
        case .uuid(let uuid): uuid.lowercased
        case .settingKey(let key): key
        }
    }

    /// Parses text typed by a person: a UUID if it is one, else a setting key.
    public init(parsing text: String) {
        if let uuid = UUID(uuidString: text) { self = .uuid(uuid) } else { self = .settingKey(text) }
    }
}
