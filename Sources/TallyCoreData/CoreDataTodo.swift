import Foundation

/// One todo row of a Core Data store, with the values as the store held them.
public struct CoreDataTodo: Sendable, Equatable {
    /// Names the row across imports and devices (see `CoreDataExpense.sourceKey`).
    public var sourceKey: String
    /// The row's `Z_PK`.
    public var primaryKey: Int64
    /// The `id` attribute, when present and valid.
    public var id: UUID?
    /// The title.
    public var title: String
    /// Memo.
    public var memo: String?
    /// Start.
    public var startDate: Date?
    /// End.
    public var endDate: Date?
    /// Done.
    public var completed: Bool?
    /// Whether it is a challenge.
    public var isChallenge: Bool?
    /// Progress as stored: 0…1 or 0…100, depending on the app.
    public var percentage: Double?

    /// A todo; see the properties.
    public init(
        sourceKey: String, primaryKey: Int64, id: UUID?, title: String, memo: String?, startDate: Date?,
        endDate: Date?, completed: Bool?, isChallenge: Bool?, percentage: Double?
    ) {
        self.sourceKey = sourceKey
        self.primaryKey = primaryKey
        self.id = id
        self.title = title
        self.memo = memo
        self.startDate = startDate
        self.endDate = endDate
        self.completed = completed
        self.isChallenge = isChallenge
        self.percentage = percentage
    }
}
