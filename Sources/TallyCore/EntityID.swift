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

    /// A UUID as two words (`UUID.hashAsWords`): a fold hashes the id of every event.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .uuid(let uuid): uuid.hashAsWords(into: &hasher)
        case .settingKey(let key): hasher.combine(key)
        }
    }
}

extension EntityID: Comparable {
    /// Sorts like `description` — a UUID's lower-case text sorts like its bytes — without making
    /// the text for two UUIDs (projections sort hundreds of thousands of ids to write in id order).
    public static func < (left: EntityID, right: EntityID) -> Bool {
        if case .uuid(let a) = left, case .uuid(let b) = right {
            return withUnsafeBytes(of: a.uuid) { a in withUnsafeBytes(of: b.uuid) { b in memcmp(a.baseAddress!, b.baseAddress!, 16) < 0 } }
        }
        return left.description < right.description
    }
}
