import Foundation
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

    /// The row for a live expense's state; nil if a required property has not arrived.
    init?(_ entity: LedgerState.Entity) {
        guard case .string(let kind)? = entity.value(.kind), case .int(let amount)? = entity.value(.amount),
            case .string(let currency)? = entity.value(.currency), case .dateTime(let date)? = entity.value(.date),
            case .string(let cycle)? = entity.value(.repeat)
        else { return nil }
        id = entity.id.description
        self.kind = kind
        self.amount = amount
        self.currency = currency
        self.date = date.description
        dateMillis = date.epochMillis
        month = date.localMonth
        if case .uuid(let category)? = entity.value(.categoryId) { categoryId = category.lowercased }
        if case .string(let text)? = entity.value(.payee) { payee = text }
        if case .string(let text)? = entity.value(.payment) { payment = text }
        if case .string(let text)? = entity.value(.memo) { memo = text }
        if case .strings(let list)? = entity.value(.tags) { tags = list } else { tags = [] }
        `repeat` = cycle
        if case .strings(let list)? = entity.value(.attachments) { attachments = list } else { attachments = [] }
    }

    init(
        id: String, kind: String, amount: Int64, currency: String, date: String, dateMillis: Int64, month: String, categoryId: String?,
        categoryName: String?, parentCategoryName: String?, payee: String?, payment: String?, memo: String?, tags: [String], repeat: String,
        attachments: [String]
    ) {
        self.payee = payee
        (self.id, self.kind, self.amount, self.currency, self.date, self.dateMillis, self.month) = (id, kind, amount, currency, date, dateMillis, month)
        (self.categoryId, self.categoryName, self.parentCategoryName, self.payment, self.memo) = (categoryId, categoryName, parentCategoryName, payment, memo)
        (self.tags, self.repeat, self.attachments) = (tags, `repeat`, attachments)
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

    init?(_ entity: LedgerState.Entity) {
        guard case .int(let amount)? = entity.value(.amount), case .string(let currency)? = entity.value(.currency),
            case .string(let from)? = entity.value(.fromMonth)
        else { return nil }
        id = entity.id.description
        (self.amount, self.currency, fromMonth) = (amount, currency, from)
        if case .uuid(let category)? = entity.value(.categoryId) { categoryRef = category.lowercased }
        categoryId = categoryRef
        if case .string(let to)? = entity.value(.toMonth) { toMonth = to }
    }

    init(id: String, categoryRef: String?, categoryId: String?, amount: Int64, currency: String, fromMonth: String, toMonth: String?) {
        (self.id, self.categoryRef, self.categoryId, self.amount, self.currency) = (id, categoryRef, categoryId, amount, currency)
        (self.fromMonth, self.toMonth) = (fromMonth, toMonth)
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

    init?(_ entity: LedgerState.Entity) {
        guard case .string(let title)? = entity.value(.title) else { return nil }
        id = entity.id.description
        self.title = title
        if case .string(let text)? = entity.value(.memo) { memo = text }
        if case .dateTime(let date)? = entity.value(.startDate) { startDate = date.description }
        if case .dateTime(let date)? = entity.value(.endDate) { endDate = date.description }
        if case .bools(let list)? = entity.value(.checks) { checks = list } else { checks = [] }
        percentage = Todo.percentage(entity.value(.checks))
        if case .bool(let flag)? = entity.value(.isChallenge) { isChallenge = flag } else { isChallenge = false }
        if case .bool(let flag)? = entity.value(.isCompleted) { isCompleted = flag } else { isCompleted = false }
        if case .strings(let list)? = entity.value(.attachments) { attachments = list } else { attachments = [] }
    }

    /// A challenge's streaks at `now`, both days counted in the calendar of its start date's
    /// UTC offset (so a challenge started at 00:30 in Seoul starts that day wherever the
    /// service runs); nil for a to-do that is not a challenge or has no start date.
    public func streaks(now: DateTime = .nowHere) -> Todo.Streaks? {
        guard isChallenge, let startDate, let start = DateTime(iso8601: startDate) else { return nil }
        return Todo.streaks(
            checks, start: start.localDayNumber, today: DateTime(epochMillis: now.epochMillis, offsetMinutes: start.offsetMinutes).localDayNumber)
    }

    init(
        id: String, title: String, memo: String?, startDate: String?, endDate: String?, checks: [Bool], percentage: Double,
        isChallenge: Bool, isCompleted: Bool, attachments: [String]
    ) {
        (self.id, self.title, self.memo, self.startDate, self.endDate, self.checks) = (id, title, memo, startDate, endDate, checks)
        (self.percentage, self.isChallenge, self.isCompleted, self.attachments) = (percentage, isChallenge, isCompleted, attachments)
    }
}

/// A setting and its scope.
public struct SettingRow: Sendable, Equatable {
    public var key: String
    public var scope: String
    /// Canonical JSON.
    public var value: String
}
