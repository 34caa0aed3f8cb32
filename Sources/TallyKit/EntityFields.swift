import Foundation
import TallyCore

/// The fields of a write, typed. On a create, a field left nil takes the entity's default
/// (`EntitySpec`: today, the default currency, no category…); on an update, a field left nil
/// is left as it is, and an optional field set to `.some(nil)` is cleared. Every value then
/// passes the same field specs and write rules as the service's (`Ledger`).
public protocol EntityFields: Sendable {
    /// The entity type these fields are of.
    static var entityType: EntityType { get }
    /// The properties set, as events carry them.
    func properties() throws -> PropertyMap
}

/// An expense or an income.
public struct ExpenseFields: EntityFields {
    public static let entityType = EntityType.expense
    public enum Kind: String, Sendable { case expense, income }
    public enum Repeat: String, Sendable { case none, daily, weekly, monthly, yearly }

    public var kind: Kind?
    /// In integer minor units (12000 = ₩12,000; 1250 = $12.50).
    public var amount: Int64?
    /// ISO 4217 code.
    public var currency: String?
    public var date: Date?
    /// The time zone the date is in for the person (which day and month it counts in).
    public var timeZone: TimeZone
    public var categoryID: UUID??
    public var payee: String??
    public var payment: String??
    public var memo: String??
    public var tags: [String]?
    public var `repeat`: Repeat?
    /// Digests of attachments this replica holds (`Replica.addAttachment`).
    public var attachments: [String]?
    /// The account it was paid from or into (issue 34).
    public var accountId: UUID??
    /// Who paid it, and how it is shared among whom: equally (the names, any number each), by
    /// shares (weights) or by amounts (each one's part in minor units) — docs/HOUSEHOLD.md.
    public var paidBy: String??
    public var split: Split??
    public var shares: [String: Int64]??
    public enum Split: String, Sendable { case equal, shares, amounts }

    public init(
        kind: Kind? = nil, amount: Int64? = nil, currency: String? = nil, date: Date? = nil, timeZone: TimeZone = .current,
        categoryID: UUID?? = nil, payee: String?? = nil, payment: String?? = nil, memo: String?? = nil, tags: [String]? = nil,
        repeat: Repeat? = nil, attachments: [String]? = nil, accountId: UUID?? = nil, paidBy: String?? = nil, split: Split?? = nil,
        shares: [String: Int64]?? = nil
    ) {
        (self.kind, self.amount, self.currency, self.date, self.timeZone) = (kind, amount, currency, date, timeZone)
        (self.categoryID, self.payee, self.payment, self.memo, self.tags) = (categoryID, payee, payment, memo, tags)
        (self.repeat, self.attachments) = (`repeat`, attachments)
        (self.accountId, self.paidBy, self.split, self.shares) = (accountId, paidBy, split, shares)
    }

    public func properties() throws -> PropertyMap {
        var map = PropertyMap()
        map[.kind] = kind.map { .string($0.rawValue) }
        map[.amount] = amount.map { .int($0) }
        map[.currency] = currency.map { .string($0) }
        map[.date] = try date.map { .dateTime(try FieldValues.dateTime($0, in: timeZone, field: "date")) }
        map[.categoryId] = categoryID.map { $0.map { .uuid($0) } ?? .null }
        map[.payee] = FieldValues.optionalText(payee)
        map[.payment] = FieldValues.optionalText(payment)
        map[.memo] = FieldValues.optionalText(memo)
        map[.tags] = tags.map { .strings($0) }
        map[.repeat] = `repeat`.map { .string($0.rawValue) }
        map[.attachments] = attachments.map { .strings($0) }
        map[.accountId] = accountId.map { $0.map { .uuid($0) } ?? .null }
        map[.paidBy] = FieldValues.optionalText(paidBy)
        map[.split] = split.map { $0.map { .string($0.rawValue) } ?? .null }
        // An object of names to numbers, keys in order (`EntitySchema.validate` checks it).
        map[.shares] = shares.map { $0.map { .json(JSONText.object($0.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) }).serialized) } ?? .null }
        return map
    }
}

/// A category; a sub-category names its parent.
public struct CategoryFields: EntityFields {
    public static let entityType = EntityType.category
    public var name: String?
    public var parentID: UUID??
    public var icon: String??
    public var kind: ExpenseFields.Kind?

    public init(name: String? = nil, parentID: UUID?? = nil, icon: String?? = nil, kind: ExpenseFields.Kind? = nil) {
        (self.name, self.parentID, self.icon, self.kind) = (name, parentID, icon, kind)
    }

    public func properties() throws -> PropertyMap {
        var map = PropertyMap()
        map[.name] = name.map { .string($0) }
        map[.parentId] = parentID.map { $0.map { .uuid($0) } ?? .null }
        map[.icon] = FieldValues.optionalText(icon)
        map[.kind] = kind.map { .string($0.rawValue) }
        return map
    }
}

/// A to-do or a challenge (its percentage follows from its checks).
public struct TodoFields: EntityFields {
    public static let entityType = EntityType.todo
    public var title: String?
    public var memo: String??
    public var startDate: Date??
    public var endDate: Date??
    public var timeZone: TimeZone
    /// One check per day (a challenge) or step.
    public var checks: [Bool]?
    public var isChallenge: Bool?
    public var isCompleted: Bool?
    public var attachments: [String]?

    public init(
        title: String? = nil, memo: String?? = nil, startDate: Date?? = nil, endDate: Date?? = nil, timeZone: TimeZone = .current,
        checks: [Bool]? = nil, isChallenge: Bool? = nil, isCompleted: Bool? = nil, attachments: [String]? = nil
    ) {
        (self.title, self.memo, self.startDate, self.endDate, self.timeZone) = (title, memo, startDate, endDate, timeZone)
        (self.checks, self.isChallenge, self.isCompleted, self.attachments) = (checks, isChallenge, isCompleted, attachments)
    }

    public func properties() throws -> PropertyMap {
        var map = PropertyMap()
        map[.title] = title.map { .string($0) }
        map[.memo] = FieldValues.optionalText(memo)
        map[.startDate] = try startDate.map { try $0.map { .dateTime(try FieldValues.dateTime($0, in: timeZone, field: "startDate")) } ?? .null }
        map[.endDate] = try endDate.map { try $0.map { .dateTime(try FieldValues.dateTime($0, in: timeZone, field: "endDate")) } ?? .null }
        map[.checks] = checks.map { .bools($0) }
        map[.isChallenge] = isChallenge.map { .bool($0) }
        map[.isCompleted] = isCompleted.map { .bool($0) }
        map[.attachments] = attachments.map { .strings($0) }
        return map
    }
}

/// A monthly budget for a category (or, with none, for all spending).
public struct BudgetFields: EntityFields {
    public static let entityType = EntityType.budget
    public var categoryID: UUID??
    public var amount: Int64?
    public var currency: String?
    /// `YYYY-MM`.
    public var fromMonth: String?
    public var toMonth: String??

    public init(categoryID: UUID?? = nil, amount: Int64? = nil, currency: String? = nil, fromMonth: String? = nil, toMonth: String?? = nil) {
        (self.categoryID, self.amount, self.currency, self.fromMonth, self.toMonth) = (categoryID, amount, currency, fromMonth, toMonth)
    }

    public func properties() throws -> PropertyMap {
        var map = PropertyMap()
        map[.categoryId] = categoryID.map { $0.map { .uuid($0) } ?? .null }
        map[.amount] = amount.map { .int($0) }
        map[.currency] = currency.map { .string($0) }
        map[.fromMonth] = fromMonth.map { .string($0) }
        map[.toMonth] = FieldValues.optionalText(toMonth)
        return map
    }
}

/// Conversions shared by the typed fields.
enum FieldValues {
    /// `.some(nil)` clears the field (`null`); nil leaves it out.
    static func optionalText(_ value: String??) -> PropertyValue? {
        value.map { $0.map { .string($0) } ?? .null }
    }

    /// A date in a time zone as the log stores it (milliseconds and the zone's offset then).
    static func dateTime(_ date: Date, in timeZone: TimeZone, field: String) throws(ValidationError) -> DateTime {
        guard let value = DateTime(date: date, timeZone: timeZone) else { throw ValidationError(field: field, "must be a real date in a usable time zone") }
        return value
    }
}
