import Foundation
import TallyCore

/// The typed fields of the other entities: recurring entries, categorisation rules, exchange
/// rates, and (issue 34) accounts, transfers and settlements. Same conventions as
/// `ExpenseFields`: nil leaves a field (or takes its default on a create), `.some(nil)` clears it.

/// An entry that repeats: each occurrence becomes an ordinary expense (docs/HOUSEHOLD.md).
public struct RecurringFields: EntityFields {
    public static let entityType = EntityType.recurring
    public enum Cadence: String, Sendable { case daily, weekly, monthly, yearly }
    public var cadence: Cadence?
    public var start: Date?
    public var end: Date??
    public var timeZone: TimeZone
    /// At most this many occurrences.
    public var count: Int??
    public var kind: ExpenseFields.Kind?
    public var amount: Int64?
    public var currency: String?
    public var categoryID: UUID??
    public var payee: String??
    public var memo: String??

    public init(
        cadence: Cadence? = nil, start: Date? = nil, end: Date?? = nil, timeZone: TimeZone = .current, count: Int?? = nil, kind: ExpenseFields.Kind? = nil,
        amount: Int64? = nil, currency: String? = nil, categoryID: UUID?? = nil, payee: String?? = nil, memo: String?? = nil
    ) {
        (self.cadence, self.start, self.end, self.timeZone, self.count, self.kind) = (cadence, start, end, timeZone, count, kind)
        (self.amount, self.currency, self.categoryID, self.payee, self.memo) = (amount, currency, categoryID, payee, memo)
    }

    public func properties() throws -> PropertyMap {
        var map = PropertyMap()
        map[.cadence] = cadence.map { .string($0.rawValue) }
        map[.startDate] = try start.map { .dateTime(try FieldValues.dateTime($0, in: timeZone, field: "startDate")) }
        map[.endDate] = try end.map { try $0.map { .dateTime(try FieldValues.dateTime($0, in: timeZone, field: "endDate")) } ?? .null }
        map[.count] = count.map { $0.map { .int(Int64($0)) } ?? .null }
        map[.kind] = kind.map { .string($0.rawValue) }
        map[.amount] = amount.map { .int($0) }
        map[.currency] = currency.map { .string($0) }
        map[.categoryId] = categoryID.map { $0.map { .uuid($0) } ?? .null }
        map[.payee] = FieldValues.optionalText(payee)
        map[.memo] = FieldValues.optionalText(memo)
        return map
    }
}

/// A categorisation rule for imports: text a payee or memo contains, and the category it gives.
public struct RuleFields: EntityFields {
    public static let entityType = EntityType.rule
    public var pattern: String?
    /// `contains` (default) or `matches` (the whole text, `*` and `?` wildcards).
    public var match: String?
    public var categoryID: UUID??
    public var tags: [String]?

    public init(pattern: String? = nil, match: String? = nil, categoryID: UUID?? = nil, tags: [String]? = nil) {
        (self.pattern, self.match, self.categoryID, self.tags) = (pattern, match, categoryID, tags)
    }

    public func properties() throws -> PropertyMap {
        var map = PropertyMap()
        map[.pattern] = pattern.map { .string($0) }
        map[.match] = match.map { .string($0) }
        map[.categoryId] = categoryID.map { $0.map { .uuid($0) } ?? .null }
        map[.tags] = tags.map { .strings($0) }
        return map
    }
}

/// An exchange rate: one `currency` is `rate` of `toCurrency` from `date`'s day on.
public struct RateFields: EntityFields {
    public static let entityType = EntityType.rate
    public var currency: String?
    public var toCurrency: String?
    /// Decimal text, e.g. "1385.2".
    public var rate: String?
    public var date: Date?
    public var timeZone: TimeZone

    public init(currency: String? = nil, toCurrency: String? = nil, rate: String? = nil, date: Date? = nil, timeZone: TimeZone = .current) {
        (self.currency, self.toCurrency, self.rate, self.date, self.timeZone) = (currency, toCurrency, rate, date, timeZone)
    }

    public func properties() throws -> PropertyMap {
        var map = PropertyMap()
        map[.currency] = currency.map { .string($0) }
        map[.toCurrency] = toCurrency.map { .string($0) }
        map[.rate] = rate.map { .string($0) }
        map[.date] = try date.map { .dateTime(try FieldValues.dateTime($0, in: timeZone, field: "date")) }
        return map
    }
}

/// Where money is (issue 34): a bank account, a card (with its closing and payment days), cash,
/// savings, a loan.
public struct AccountFields: EntityFields {
    public static let entityType = EntityType.account
    public enum Kind: String, Sendable { case bank, card, cash, savings, loan }
    public var name: String?
    public var kind: Kind?
    public var currency: String?
    /// Minor units; negative for what is owed.
    public var openingBalance: Int64?
    public var openingDate: Date?
    public var timeZone: TimeZone
    public var isArchived: Bool?
    public var closingDay: Int??
    public var paymentDay: Int??
    /// Reconciled against a statement up to this moment, and the statement's balance then
    /// (`Replica.reconciliation(of:)` shows the difference and what changed since).
    public var reconciledThrough: Date??
    public var statementBalance: Int64??

    public init(
        name: String? = nil, kind: Kind? = nil, currency: String? = nil, openingBalance: Int64? = nil, openingDate: Date? = nil, timeZone: TimeZone = .current,
        isArchived: Bool? = nil, closingDay: Int?? = nil, paymentDay: Int?? = nil, reconciledThrough: Date?? = nil, statementBalance: Int64?? = nil
    ) {
        (self.name, self.kind, self.currency, self.openingBalance, self.openingDate, self.timeZone) = (
            name, kind, currency, openingBalance, openingDate, timeZone
        )
        (self.isArchived, self.closingDay, self.paymentDay) = (isArchived, closingDay, paymentDay)
        (self.reconciledThrough, self.statementBalance) = (reconciledThrough, statementBalance)
    }

    public func properties() throws -> PropertyMap {
        var map = PropertyMap()
        map[.name] = name.map { .string($0) }
        map[.kind] = kind.map { .string($0.rawValue) }
        map[.currency] = currency.map { .string($0) }
        map[.openingBalance] = openingBalance.map { .int($0) }
        map[.openingDate] = try openingDate.map { .dateTime(try FieldValues.dateTime($0, in: timeZone, field: "openingDate")) }
        map[.isArchived] = isArchived.map { .bool($0) }
        map[.closingDay] = closingDay.map { $0.map { .int(Int64($0)) } ?? .null }
        map[.paymentDay] = paymentDay.map { $0.map { .int(Int64($0)) } ?? .null }
        if let reconciledThrough {
            map[.reconciledThrough] = try reconciledThrough.map { .dateTime(try FieldValues.dateTime($0, in: timeZone, field: "reconciledThrough")) } ?? .null
        }
        map[.statementBalance] = statementBalance.map { $0.map { .int($0) } ?? .null }
        return map
    }
}

/// Money moved between two accounts: not spending.
public struct TransferFields: EntityFields {
    public static let entityType = EntityType.transfer
    public var from: UUID?
    public var to: UUID?
    public var amount: Int64?
    /// What arrives, when the two accounts' currencies differ.
    public var toAmount: Int64??
    public var date: Date?
    public var timeZone: TimeZone
    public var memo: String??

    public init(
        from: UUID? = nil, to: UUID? = nil, amount: Int64? = nil, toAmount: Int64?? = nil, date: Date? = nil, timeZone: TimeZone = .current,
        memo: String?? = nil
    ) {
        (self.from, self.to, self.amount, self.toAmount, self.date, self.timeZone, self.memo) = (from, to, amount, toAmount, date, timeZone, memo)
    }

    public func properties() throws -> PropertyMap {
        var map = PropertyMap()
        map[.accountId] = from.map { .uuid($0) }
        map[.toAccountId] = to.map { .uuid($0) }
        map[.amount] = amount.map { .int($0) }
        map[.toAmount] = toAmount.map { $0.map { .int($0) } ?? .null }
        map[.date] = try date.map { .dateTime(try FieldValues.dateTime($0, in: timeZone, field: "date")) }
        map[.memo] = FieldValues.optionalText(memo)
        return map
    }
}

/// One person of the household paying another back.
public struct SettlementFields: EntityFields {
    public static let entityType = EntityType.settlement
    public var from: String?
    public var to: String?
    public var amount: Int64?
    public var currency: String?
    public var date: Date?
    public var timeZone: TimeZone

    public init(from: String? = nil, to: String? = nil, amount: Int64? = nil, currency: String? = nil, date: Date? = nil, timeZone: TimeZone = .current) {
        (self.from, self.to, self.amount, self.currency, self.date, self.timeZone) = (from, to, amount, currency, date, timeZone)
    }

    public func properties() throws -> PropertyMap {
        var map = PropertyMap()
        map[.paidBy] = from.map { .string($0) }
        map[.paidTo] = to.map { .string($0) }
        map[.amount] = amount.map { .int($0) }
        map[.currency] = currency.map { .string($0) }
        map[.date] = try date.map { .dateTime(try FieldValues.dateTime($0, in: timeZone, field: "date")) }
        return map
    }
}
