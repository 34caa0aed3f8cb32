/// Every property any entity has. The raw value is the on-disk code: never renumber, only add.
/// `jsonName` is the field name of DESIGN.md §2, used in JSON and the CLI.
public enum PropertyName: UInt8, CaseIterable, Sendable, Comparable, CustomStringConvertible {
    case kind = 1
    case amount = 2
    case currency = 3
    case date = 4
    case categoryId = 5
    case payment = 6
    case memo = 7
    case tags = 8
    case `repeat` = 9
    case attachments = 10
    case name = 11
    case parentId = 12
    case icon = 13
    case title = 14
    case startDate = 15
    case endDate = 16
    case checks = 17
    case isChallenge = 18
    case isCompleted = 19
    case value = 20
    /// Since event schema version 2.
    case payee = 21
    /// Since event schema version 3 (budgets).
    case fromMonth = 22
    case toMonth = 23
    /// Since event schema version 3 (recurring rules).
    case cadence = 24
    case count = 25
    case monthEnd = 26
    case skippedDates = 27
    /// Since event schema version 4 (statement imports).
    case importKey = 28
    case importId = 29
    case digest = 30
    case format = 31
    /// Since event schema version 4 (categorisation rules).
    case pattern = 32
    case match = 33
    /// Since event schema version 4 (exchange rates).
    case toCurrency = 34
    case rate = 35
    /// Since event schema version 6 (accounts and transfers, issue 34).
    case accountId = 36
    case toAccountId = 37
    case toAmount = 38
    case openingBalance = 39
    case openingDate = 40
    case isArchived = 41
    case closingDay = 42
    case paymentDay = 43
    case paidBy = 44
    case split = 45
    case shares = 46
    case paidTo = 47
    case expenseId = 48
    case reconciledThrough = 49
    case statementBalance = 50

    /// The JSON field name.
    public var jsonName: String {
        switch self {
        case .kind: "kind"
        case .amount: "amount"
        case .currency: "currency"
        case .date: "date"
        case .categoryId: "categoryId"
        case .payment: "payment"
        case .memo: "memo"
        case .tags: "tags"
        case .repeat: "repeat"
        case .attachments: "attachments"
        case .name: "name"
        case .parentId: "parentId"
        case .icon: "icon"
        case .title: "title"
        case .startDate: "startDate"
        case .endDate: "endDate"
        case .checks: "checks"
        case .isChallenge: "isChallenge"
        case .isCompleted: "isCompleted"
        case .value: "value"
        case .payee: "payee"
        case .fromMonth: "fromMonth"
        case .toMonth: "toMonth"
        case .cadence: "cadence"
        case .count: "count"
        case .monthEnd: "monthEnd"
        case .skippedDates: "skippedDates"
        case .importKey: "importKey"
        case .importId: "importId"
        case .digest: "digest"
        case .format: "format"
        case .pattern: "pattern"
        case .match: "match"
        case .toCurrency: "toCurrency"
        case .rate: "rate"
        case .accountId: "accountId"
        case .toAccountId: "toAccountId"
        case .toAmount: "toAmount"
        case .openingBalance: "openingBalance"
        case .openingDate: "openingDate"
        case .isArchived: "isArchived"
        case .closingDay: "closingDay"
        case .paymentDay: "paymentDay"
        case .paidBy: "paidBy"
        case .split: "split"
        case .shares: "shares"
        case .paidTo: "paidTo"
        case .expenseId: "expenseId"
        case .reconciledThrough: "reconciledThrough"
        case .statementBalance: "statementBalance"
        }
    }

    public var description: String { jsonName }

    /// Looks a property up by its JSON field name.
    public init?(jsonName: String) {
        guard let name = Self.allCases.first(where: { $0.jsonName == jsonName }) else { return nil }
        self = name
    }

    public static func < (lhs: PropertyName, rhs: PropertyName) -> Bool { lhs.rawValue < rhs.rawValue }
}
