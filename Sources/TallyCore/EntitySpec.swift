/// The fields of one entity type, in the order JSON shows them, and the defaults a create gets.
///
/// To add a field: add its `PropertyName` (a new code, never a reused one), add a `FieldSpec`
/// here (with `since:` the schema version that introduces it), and if the views show it, a
/// numbered migration and its column (see docs/ARCHITECTURE.md, "Where a change goes").
public struct EntitySpec: Sendable {
    /// The entity type.
    public let type: EntityType
    /// Its fields, in display order.
    public let fields: [FieldSpec]

    /// The spec of `type`.
    public static func of(_ type: EntityType) -> EntitySpec {
        switch type {
        case .expense: expense
        case .category: category
        case .todo: todo
        case .setting: setting
        case .budget: budget
        case .recurring: recurring
        case .importBatch: importBatch
        case .rule: rule
        case .rate: rate
        case .account: account
        case .transfer: transfer
        case .settlement: settlement
        case .line: line
        }
    }

    /// The event schema version that introduced the type: an older event of it is out of rule.
    public var since: UInt16 {
        switch type {
        case .budget, .recurring: 3
        case .importBatch, .rule, .rate: 4
        case .account, .transfer, .settlement: 6
        case .line: 7
        default: 1
        }
    }

    /// Its fields by property code, for lookups without a search (every incoming event's
    /// every property is looked up).
    private let byCode: [FieldSpec?]

    /// A spec of `type` with `fields`.
    init(type: EntityType, fields: [FieldSpec]) {
        self.type = type
        self.fields = fields
        var byCode = [FieldSpec?](repeating: nil, count: Int(PropertyName.allCases.map(\.rawValue).max() ?? 0) + 1)
        for field in fields { byCode[Int(field.name.rawValue)] = field }
        self.byCode = byCode
    }

    /// The field `name`, if this type has it.
    public func field(_ name: PropertyName) -> FieldSpec? { byCode[Int(name.rawValue)] }

    /// The fields the views show, in display order.
    public var shownFields: [FieldSpec] { fields.filter(\.isShown) }

    /// An entity's shown fields as JSON, in display order (`FieldSpec.unsetJSON` for those it
    /// has no value for): the one rendering of an entity kept in `entity_state` only.
    public func fieldsJSON(of entity: LedgerState.Entity) -> [(String, JSONText)] {
        shownFields.map { ($0.name.jsonName, entity.value($0.name)?.json ?? $0.unsetJSON) }
    }

    /// The field named `jsonName` in JSON or on the command line.
    public func field(jsonName: String) -> FieldSpec? { fields.first { $0.name.jsonName == jsonName } }

    static let kinds = ["income", "expense"]
    static let repeats = ["none", "daily", "weekly", "monthly", "yearly"]
    static let shortText = FieldKind.text(maxLength: Limits.maxShortTextLength, nonEmpty: false)
    static let memo = FieldSpec(.memo, .text(maxLength: Limits.maxMemoLength, nonEmpty: false), nullable: true, help: "A note.")
    static let attachments = FieldSpec(
        .attachments, .digests(maxCount: Limits.maxAttachments),
        help: "SHA-256 hex digests of attached files (receipts).")

    /// A transaction line (DESIGN.md §2).
    public static let expense = EntitySpec(
        type: .expense,
        fields: [
            FieldSpec(.kind, .choice(kinds), required: true, help: "income or expense (default: expense)."),
            FieldSpec(.amount, .amount, required: true, help: "Amount in integer minor units (12000 = ₩12,000; 1250 = $12.50)."),
            FieldSpec(.currency, .currency, required: true, help: "ISO 4217 code (default: setting defaultCurrency, else KRW)."),
            FieldSpec(.date, .dateTime, required: true, help: "ISO 8601 date-time; a bare YYYY-MM-DD is local midnight (default: now)."),
            FieldSpec(.categoryId, .reference, nullable: true, help: "Category id (null or 'none' clears it)."),
            FieldSpec(.payee, shortText, nullable: true, since: 2, help: "Who was paid, or who paid: the merchant or payer (free text)."),
            FieldSpec(.payment, shortText, nullable: true, help: "Payment method: card, cash, transfer, … (free text)."),
            memo,
            FieldSpec(.tags, .textSet(maxCount: Limits.maxTags, maxLength: Limits.maxShortTextLength), help: "Tags (a set; an update replaces all)."),
            FieldSpec(.repeat, .choice(repeats), required: true, help: "none, daily, weekly, monthly or yearly (default: none)."),
            attachments,
            FieldSpec(
                .importKey, .text(maxLength: 64, nonEmpty: true), nullable: true, since: 4, shown: false,
                help: "What identifies the statement row it was imported from (a digest; docs/IMPORT.md)."),
            FieldSpec(.importId, .reference, nullable: true, since: 4, shown: false, help: "The import it came with."),
            FieldSpec(.accountId, .reference, nullable: true, since: 6, help: "The account it was paid from or into (null or 'none': none)."),
            FieldSpec(.paidBy, personName, nullable: true, since: 6, help: "Who of the household paid it (a member's or a person's name)."),
            FieldSpec(.split, .choice(splits), nullable: true, since: 6, help: "How it is shared: equal, shares or amounts (with shares)."),
            FieldSpec(
                .shares, .shares(maxCount: Limits.maxSharePeople), nullable: true, since: 6,
                help: "Who shares it: NAME=NUMBER,… (equal: the names; shares: weights; amounts: each one's part in minor units)."),
        ])

    /// How an expense is shared among the people who share it.
    public static let splits = ["equal", "shares", "amounts"]
    static let personName = FieldKind.text(maxLength: 64, nonEmpty: true)

    /// Money one person paid another back (issue 34): what settles who owes whom.
    public static let settlement = EntitySpec(
        type: .settlement,
        fields: [
            FieldSpec(.paidBy, personName, required: true, since: 6, help: "Who paid (who owed)."),
            FieldSpec(.paidTo, personName, required: true, since: 6, help: "Who was paid (who was owed)."),
            FieldSpec(.amount, .amount, required: true, since: 6, help: "How much, in integer minor units."),
            FieldSpec(.currency, .currency, required: true, since: 6, help: "ISO 4217 code (default: setting defaultCurrency, else KRW)."),
            FieldSpec(.date, .dateTime, required: true, since: 6, help: "When (ISO 8601; default: now)."),
            memo6,
        ])

    /// The kinds of account (docs/HOUSEHOLD.md, "Accounts").
    public static let accountKinds = ["bank", "card", "cash", "savings", "loan"]

    /// Where money is (issue 34): its balance on a day is its opening balance (from its opening
    /// day) plus the incomes and less the expenses that name it, plus the transfers into it and
    /// less those out of it, up to that day.
    public static let account = EntitySpec(
        type: .account,
        fields: [
            FieldSpec(.name, .text(maxLength: Limits.maxNameLength, nonEmpty: true), required: true, since: 6, help: "The account's name."),
            FieldSpec(.kind, .choice(accountKinds), required: true, since: 6, help: "bank, card, cash, savings or loan (default: bank)."),
            FieldSpec(.currency, .currency, required: true, since: 6, help: "ISO 4217 code (default: setting defaultCurrency, else KRW)."),
            FieldSpec(
                .openingBalance, .signedAmount, required: true, since: 6,
                help: "What it held on its opening day, in integer minor units (negative: owed, as a card or a loan)."),
            FieldSpec(.openingDate, .dateTime, required: true, since: 6, help: "The day its balance starts from (ISO 8601; default: now)."),
            FieldSpec(.isArchived, .bool, required: true, since: 6, help: "Closed: kept in history and balances, left out of pickers."),
            FieldSpec(
                .closingDay, .count(max: 31), nullable: true, since: 6,
                help: "A card's statement closing day, 1–31 (the month's last day where it has fewer): its bills (none: no bills)."),
            FieldSpec(
                .paymentDay, .count(max: 31), nullable: true, since: 6,
                help: "A card's payment day, 1–31: a bill is due on the first such day after it closes (none: its closing day)."),
            FieldSpec(
                .reconciledThrough, .dateTime, nullable: true, since: 7,
                help: "Reconciled against a statement up to this moment (ISO 8601; none: never): what it shows is cleared."),
            FieldSpec(
                .statementBalance, .signedAmount, nullable: true, since: 7,
                help: "The statement's balance at reconciledThrough, in integer minor units: the difference from the balance is shown."),
        ])

    /// One line of a split receipt (issue 34, docs/HOUSEHOLD.md "Split receipts"): part of an
    /// expense's amount in a category of its own. The lines of an expense should add up to it;
    /// where merged edits leave them not adding up, the receipt is shown as needing attention.
    public static let line = EntitySpec(
        type: .line,
        fields: [
            FieldSpec(.expenseId, .reference, required: true, since: 7, help: "The expense (the payment) this line is part of."),
            FieldSpec(.categoryId, .reference, nullable: true, since: 7, help: "The line's category (null or 'none': the expense's own)."),
            FieldSpec(.amount, .amount, required: true, since: 7, help: "The line's part of the payment, in the expense's minor units."),
            FieldSpec(.memo, .text(maxLength: Limits.maxMemoLength, nonEmpty: false), nullable: true, since: 7, help: "What the line was for."),
        ])

    /// Money moved between two accounts (issue 34): not spending, so summaries and budgets leave
    /// it out. `amount` leaves the first account; `toAmount` arrives (the same unless the two
    /// are in different currencies).
    public static let transfer = EntitySpec(
        type: .transfer,
        fields: [
            FieldSpec(.accountId, .reference, required: true, since: 6, help: "The account the money leaves."),
            FieldSpec(.toAccountId, .reference, required: true, since: 6, help: "The account the money arrives in."),
            FieldSpec(.amount, .amount, required: true, since: 6, help: "What leaves, in the first account's minor units."),
            FieldSpec(.toAmount, .amount, nullable: true, since: 6, help: "What arrives, in the second account's minor units (default: amount)."),
            FieldSpec(.date, .dateTime, required: true, since: 6, help: "When (ISO 8601; default: now)."),
            memo6,
        ])

    static let memo6 = FieldSpec(.memo, .text(maxLength: Limits.maxMemoLength, nonEmpty: false), nullable: true, since: 6, help: "A note.")

    /// A categorisation rule (docs/IMPORT.md, "Rules"): what an imported row's payee or memo
    /// contains, and the category and tags it then gets.
    public static let rule = EntitySpec(
        type: .rule,
        fields: [
            FieldSpec(
                .pattern, .text(maxLength: Limits.maxShortTextLength, nonEmpty: true), required: true, since: 4,
                help: "Text the payee or memo contains (case ignored), or with --match matches, a pattern with * and ?."),
            FieldSpec(
                .match, .choice(["contains", "matches"]), required: true, since: 4, help: "contains (default) or matches (the whole text, * and ? wildcards)."),
            FieldSpec(.categoryId, .reference, nullable: true, since: 4, help: "The category a matching row gets (null or 'none': none)."),
            FieldSpec(.tags, .textSet(maxCount: Limits.maxTags, maxLength: Limits.maxShortTextLength), since: 4, help: "Tags a matching row gets."),
        ])

    /// An exchange rate (docs/IMPORT.md, "Several currencies"): one `currency` is `rate`
    /// `toCurrency` from `date`'s day on, until a later day's rate of the pair.
    public static let rate = EntitySpec(
        type: .rate,
        fields: [
            FieldSpec(.currency, .currency, required: true, since: 4, help: "The currency converted from (ISO 4217)."),
            FieldSpec(.toCurrency, .currency, required: true, since: 4, help: "The currency converted to (ISO 4217)."),
            FieldSpec(.rate, .decimal, required: true, since: 4, help: "How many of toCurrency one of currency is, e.g. 1385.2."),
            FieldSpec(.date, .dateTime, required: true, since: 4, help: "The day it holds from (ISO 8601)."),
        ])

    /// One statement imported (docs/IMPORT.md): the file, its digest, how many expenses it made.
    public static let importBatch = EntitySpec(
        type: .importBatch,
        fields: [
            FieldSpec(.name, .text(maxLength: Limits.maxNameLength, nonEmpty: true), required: true, since: 4, help: "The file's name."),
            FieldSpec(.digest, .text(maxLength: 64, nonEmpty: true), required: true, since: 4, help: "SHA-256 of the file's bytes, hex."),
            FieldSpec(.format, .choice(["csv", "xlsx", "ofx", "coredata"]), required: true, since: 4, help: "csv, xlsx, ofx or coredata (a Core Data store)."),
            FieldSpec(.count, .count(max: Limits.maxImportRows), required: true, since: 4, help: "Expenses it created."),
        ])

    /// A category; a sub-category has a parent (DESIGN.md §2).
    public static let category = EntitySpec(
        type: .category,
        fields: [
            FieldSpec(.name, .text(maxLength: Limits.maxNameLength, nonEmpty: true), required: true, help: "The category's name."),
            FieldSpec(.parentId, .reference, nullable: true, help: "Parent category id (null or 'none': top level)."),
            FieldSpec(.icon, shortText, nullable: true, help: "An icon (an emoji or a symbol name)."),
            FieldSpec(.kind, .choice(kinds), required: true, help: "income or expense (default: expense)."),
        ])

    /// A to-do or challenge (DESIGN.md §2); its percentage is derived, never stored.
    public static let todo = EntitySpec(
        type: .todo,
        fields: [
            FieldSpec(.title, .text(maxLength: Limits.maxTitleLength, nonEmpty: true), required: true, help: "The to-do's title."),
            memo,
            FieldSpec(.startDate, .dateTime, nullable: true, help: "When it starts (ISO 8601)."),
            FieldSpec(.endDate, .dateTime, nullable: true, help: "When it ends (ISO 8601)."),
            FieldSpec(.checks, .bools(maxCount: Limits.maxChecks), required: true, help: "One check per day or step, e.g. 1,0,1."),
            FieldSpec(.isChallenge, .bool, required: true, help: "Whether it is a challenge."),
            FieldSpec(.isCompleted, .bool, required: true, help: "Whether it is done."),
            attachments,
        ])

    /// A setting's value (its key is its id; its scope is the event's local-only flag).
    public static let setting = EntitySpec(
        type: .setting,
        fields: [
            FieldSpec(.value, .json(maxBytes: Limits.maxReplicatedSettingsBytes), required: true, help: "Any JSON value.")
        ])

    /// A monthly budget for a category (its sub-categories' spending counts toward it) or, with
    /// no category, for all spending: from a month, until `toMonth` or until a later budget of
    /// the same category and currency takes over (docs/HOUSEHOLD.md).
    public static let budget = EntitySpec(
        type: .budget,
        fields: [
            FieldSpec(.categoryId, .reference, nullable: true, since: 3, help: "Category id; none (null) budgets all spending."),
            FieldSpec(.amount, .amount, required: true, since: 3, help: "The budget per month, in integer minor units."),
            FieldSpec(.currency, .currency, required: true, since: 3, help: "ISO 4217 code (default: setting defaultCurrency, else KRW)."),
            FieldSpec(.fromMonth, .month, required: true, since: 3, help: "The first month it applies to, YYYY-MM (default: this month)."),
            FieldSpec(.toMonth, .month, nullable: true, since: 3, help: "The last month it applies to, YYYY-MM (none: until a later budget takes over)."),
        ])

    /// A rule whose occurrences become ordinary expenses (docs/HOUSEHOLD.md): when, and the
    /// fields each occurrence is created with.
    public static let recurring = EntitySpec(
        type: .recurring,
        fields: [
            FieldSpec(.cadence, .choice(Recurrence.cadences), required: true, since: 3, help: "daily, weekly, monthly or yearly."),
            FieldSpec(
                .startDate, .dateTime, required: true, since: 3,
                help: "The first occurrence (ISO 8601); every occurrence has its time of day and offset (default: now)."),
            FieldSpec(.endDate, .dateTime, nullable: true, since: 3, help: "No occurrence after this day (none: no end)."),
            FieldSpec(
                .count, .count(max: Limits.maxOccurrences), nullable: true, since: 3, help: "At most this many occurrences from the start (none: no limit)."),
            FieldSpec(
                .monthEnd, .choice(Recurrence.monthEnds), required: true, since: 3,
                help: "For a start on the 29th–31st (or Feb 29): clamp to the month's last day, or skip the month (default: clamp)."),
            FieldSpec(.skippedDates, .days(maxCount: Limits.maxSkippedDates), since: 3, help: "Days whose occurrence is skipped, YYYY-MM-DD."),
            FieldSpec(.kind, .choice(kinds), required: true, since: 3, help: "income or expense (default: expense)."),
            FieldSpec(.amount, .amount, required: true, since: 3, help: "Each occurrence's amount in integer minor units."),
            FieldSpec(.currency, .currency, required: true, since: 3, help: "ISO 4217 code (default: setting defaultCurrency, else KRW)."),
            FieldSpec(.categoryId, .reference, nullable: true, since: 3, help: "Category id (null or 'none' clears it)."),
            FieldSpec(.payee, shortText, nullable: true, since: 3, help: "Who is paid, or who pays."),
            FieldSpec(.payment, shortText, nullable: true, since: 3, help: "Payment method (free text)."),
            FieldSpec(.memo, .text(maxLength: Limits.maxMemoLength, nonEmpty: false), nullable: true, since: 3, help: "A note."),
            FieldSpec(.tags, .textSet(maxCount: Limits.maxTags, maxLength: Limits.maxShortTextLength), since: 3, help: "Tags each occurrence gets."),
        ])

    /// The fields a create must name: required, with no default.
    public var fieldsACreateNames: [FieldSpec] {
        let defaults = defaults(defaultCurrency: Currency.fallbackDefault, now: DateTime(epochMillis: 0, offsetMinutes: 0))
        return fields.filter { $0.isRequired && defaults[$0.name] == nil }
    }

    /// Values a create gets for the properties it leaves out.
    public func defaults(defaultCurrency: String, now: DateTime) -> PropertyMap {
        switch type {
        case .expense: [.kind: .string("expense"), .currency: .string(defaultCurrency), .date: .dateTime(now), .repeat: .string("none")]
        case .category: [.kind: .string("expense")]
        case .todo: [.checks: .bools([]), .isChallenge: .bool(false), .isCompleted: .bool(false)]
        case .setting: [:]
        case .budget: [.currency: .string(defaultCurrency), .fromMonth: .string(now.localMonth)]
        case .recurring: [.kind: .string("expense"), .currency: .string(defaultCurrency), .startDate: .dateTime(now), .monthEnd: .string("clamp")]
        case .importBatch: [:]
        case .rule: [.match: .string("contains")]
        case .rate: [:]
        case .account:
            [.kind: .string("bank"), .currency: .string(defaultCurrency), .openingBalance: .int(0), .openingDate: .dateTime(now), .isArchived: .bool(false)]
        case .transfer: [.date: .dateTime(now)]
        case .settlement: [.currency: .string(defaultCurrency), .date: .dateTime(now)]
        case .line: [:]
        }
    }
}
