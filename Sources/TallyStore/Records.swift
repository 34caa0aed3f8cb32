import Foundation
import GRDB
import TallyCore

/// An expense as the views show it. Amounts are integer minor units.
public struct ExpenseRow: Sendable, Equatable {
    public var id: String
    public var kind: String
    public var amount: Int64
    public var currency: String
    public var date: String
    public var dateMillis: Int64
    public var month: String
    public var categoryId: String?
    /// The category's name, and its parent's, resolved when listing.
    public var categoryName: String?
    public var parentCategoryName: String?
    public var payee: String?
    public var payment: String?
    public var memo: String?
    public var tags: [String]
    public var `repeat`: String
    public var attachments: [String]

    /// A row of `ViewRecordJSON.Selection.expenses`, by column name.
    init(_ row: Row) {
        (id, kind, amount, currency) = (row["id"], row["kind"], row["amount"], row["currency"])
        (date, dateMillis, month) = (row["date"], row["date_ms"], row["month"])
        (categoryId, categoryName, parentCategoryName) = (row["category_id"], row["category_name"], row["parent_category_name"])
        (payee, payment, memo, `repeat`) = (row["payee"], row["payment"], row["memo"], row["repeat"])
        tags = ProjectionQueries.jsonStrings(row["tags"])
        attachments = ProjectionQueries.jsonStrings(row["attachments"])
    }
}

/// A category; a sub-category has a parent.
public struct CategoryRow: Sendable, Equatable {
    public var id: String
    public var name: String
    public var parentId: String?
    public var icon: String?
    public var kind: String

    init?(_ entity: LedgerState.Entity) {
        guard case .string(let name)? = entity.value(.name), case .string(let kind)? = entity.value(.kind) else { return nil }
        id = entity.id.description
        self.name = name
        self.kind = kind
        if case .uuid(let parent)? = entity.value(.parentId) { parentId = parent.lowercased }
        if case .string(let text)? = entity.value(.icon) { icon = text }
    }

    init(id: String, name: String, parentId: String?, icon: String?, kind: String) {
        (self.id, self.name, self.parentId, self.icon, self.kind) = (id, name, parentId, icon, kind)
    }
}

/// A budget as written (`categoryRef`) and shown (`categoryId`: the category that stands for it).
public struct BudgetRow: Sendable, Equatable {
    public var id: String
    public var categoryRef: String?
    public var categoryId: String?
    public var amount: Int64
    public var currency: String
    public var fromMonth: String
    public var toMonth: String?

    /// A row of `budgets`, by column name.
    init(_ row: Row) {
        (id, categoryRef, categoryId, amount) = (row["id"], row["category_ref"], row["category_id"], row["amount"])
        (currency, fromMonth, toMonth) = (row["currency"], row["from_month"], row["to_month"])
    }
}

/// A to-do or challenge with its derived percentage.
public struct TodoRow: Sendable, Equatable {
    public var id: String
    public var title: String
    public var memo: String?
    public var startDate: String?
    public var endDate: String?
    public var checks: [Bool]
    public var percentage: Double
    public var isChallenge: Bool
    public var isCompleted: Bool
    public var attachments: [String]

    /// A row of `todos`, by column name.
    init(_ row: Row) {
        (id, title, memo, startDate, endDate) = (row["id"], row["title"], row["memo"], row["start_date"], row["end_date"])
        (checks, percentage) = (ProjectionQueries.jsonBools(row["checks"]), row["percentage"])
        (isChallenge, isCompleted, attachments) = (row["is_challenge"], row["is_completed"], ProjectionQueries.jsonStrings(row["attachments"]))
    }

    /// A challenge's streaks at `now`, both days counted in the calendar of its start date's
    /// UTC offset (so a challenge started at 00:30 in Seoul starts that day wherever the
    /// service runs); nil for a to-do that is not a challenge or has no start date.
    public func streaks(now: DateTime = .nowHere) -> Todo.Streaks? {
        Self.streaks(isChallenge: isChallenge, startDate: startDate, checks: checks, now: now)
    }

    static func streaks(isChallenge: Bool, startDate: String?, checks: [Bool], now: DateTime) -> Todo.Streaks? {
        guard isChallenge, let startDate, let start = DateTime(iso8601: startDate) else { return nil }
        return Todo.streaks(
            checks, start: start.localDayNumber, today: DateTime(epochMillis: now.epochMillis, offsetMinutes: start.offsetMinutes).localDayNumber)
    }
}

/// A setting and its scope.
public struct SettingRow: Sendable, Equatable {
    public var key: String
    public var scope: String
    /// Canonical JSON.
    public var value: String
}
