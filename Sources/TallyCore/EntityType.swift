/// The kinds of entity the ledger keeps. Raw values are written to disk: never renumber.
public enum EntityType: UInt8, CaseIterable, Sendable, CustomStringConvertible {
    case expense = 1
    case category = 2
    case todo = 3
    case setting = 4
    /// Since event schema version 3.
    case budget = 5
    /// Since event schema version 3.
    case recurring = 6
    /// A statement import (one file, one batch); since event schema version 4.
    case importBatch = 7
    /// A categorisation rule for imports; since event schema version 4.
    case rule = 8
    /// An exchange rate for a day; since event schema version 4.
    case rate = 9
    /// Where money is — a bank account, a card, cash, savings, a loan; since event schema version 6.
    case account = 10
    /// Money moved between two accounts (not spending); since event schema version 6.
    case transfer = 11
    /// Money one person of the household paid another back (settling up); since event schema version 6.
    case settlement = 12
    /// One line of a split receipt: part of an expense's amount in a category of its own; since
    /// event schema version 7.
    case line = 13

    /// The lowercase name used in the CLI, JSON and audit output.
    public var description: String {
        switch self {
        case .expense: "expense"
        case .category: "category"
        case .todo: "todo"
        case .setting: "setting"
        case .budget: "budget"
        case .recurring: "recurring"
        case .importBatch: "import"
        case .rule: "rule"
        case .rate: "rate"
        case .account: "account"
        case .transfer: "transfer"
        case .settlement: "settlement"
        case .line: "line"
        }
    }

    /// "an expense", "a category", …: for messages.
    public var withArticle: String {
        switch self {
        case .recurring: "a recurring rule"
        case .expense, .importBatch, .account: "an " + description
        default: "a " + description
        }
    }

    /// Parses `description`.
    public init?(name: String) {
        guard let type = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = type
    }
}

/// What an event does to its entity. Raw values are written to disk: never renumber.
public enum EventOperation: UInt8, CaseIterable, Sendable, CustomStringConvertible {
    case create = 1
    case update = 2
    case delete = 3

    /// The lowercase name used in output.
    public var description: String {
        switch self {
        case .create: "create"
        case .update: "update"
        case .delete: "delete"
        }
    }
}
