import Foundation
import TallyCore
import TallyStore

/// Where the money is (issue 34, docs/HOUSEHOLD.md "Accounts"): accounts, transfers between
/// them, and each account's balance at a moment — with the net worth across accounts, in one
/// currency when asked (converted at each day's rate, as a month's summary is).
extension LedgerViews {
    /// Every live account's balance at the end of millisecond `at` (UTC epoch), typed.
    public func accountBalances(at millis: Int64) throws -> [AccountBalance] { try store.accountBalances(at: millis) }

    /// A card's statements closing in months `from` … `to` (`CardCycle.index`); nil when the
    /// account is no card with a closing day.
    public func cardBills(of account: UUID, from: CardCycle.MonthIndex, to: CardCycle.MonthIndex) throws -> [CardBill]? {
        try store.cardBills(
            accountID: account.lowercased, from: from, to: max(from, min(to, from + 119)), schedule: try cardSchedule(of: account.lowercased))
    }

    /// A card's closing and payment days over time, from its history (the audit trail, as of
    /// these views): each write of them applies from the statement of the month after the one
    /// it was made in (its stamp's UTC day), so a change re-draws no statement that closed. The
    /// first days ever set apply to every month before too. Writes are taken in stamp order,
    /// so the days now are those the merge chose, on every replica alike. (A change is dated by
    /// its writer's clock: one that ran slow re-draws statements from its month on; peers'
    /// stamps are held to `HybridClock`'s bound on clocks ahead.)
    /// Nil when no event set them (the views' days now stand for every month).
    public func cardSchedule(of id: String) throws -> CardSchedule? {
        try cardSchedules(of: [id])[id]
    }

    /// `cardSchedule` of each card of `ids`, their history read in one pass over the segments
    /// that hold any of it.
    func cardSchedules(of ids: [String]) throws -> [String: CardSchedule] {
        // Only what the views show: an event appended but not yet projected is not in them either.
        let shown = min(try projectedIndex(), asOfIndex ?? .max)
        let entities = Dictionary(ids.map { (EntityID(parsing: $0), $0) }, uniquingKeysWith: { first, _ in first })
        let histories = try AuditIndex(directory).events(of: Set(entities.keys))
        var schedules: [String: CardSchedule] = [:]
        for (entity, id) in entities {
            let events = (histories[entity] ?? []).filter { $0.index <= shown }.map(\.event)
            schedules[id] = Self.cardSchedule(from: events)
        }
        return schedules
    }

    /// A card's schedule from the events of its history.
    private static func cardSchedule(from history: [Event]) -> CardSchedule? {
        let events = history.sorted { WriteStamp(timestamp: $0.timestamp, origin: $0.origin) < WriteStamp(timestamp: $1.timestamp, origin: $1.origin) }
        var (closing, payment): (Int?, Int?) = (nil, nil)
        func day(_ value: PropertyValue) -> Int? { if case .int(let number) = value { Int(exactly: number) } else { nil } }
        var changes: [CardSchedule.Change] = []
        for event in events where event.properties[.closingDay] != nil || event.properties[.paymentDay] != nil {
            if let value = event.properties[.closingDay] { closing = day(value) }
            if let value = event.properties[.paymentDay] { payment = day(value) }
            let cycle = closing.flatMap { CardCycle(closingDay: $0, paymentDay: payment) }
            guard !changes.isEmpty || cycle != nil else { continue }  // before the first days: none
            let madeOn = Int(clamping: Int64(clamping: event.timestamp.millis) / 86_400_000)
            changes.append(CardSchedule.Change(from: changes.isEmpty ? .min : CardCycle.monthIndex(ofDay: madeOn) + 1, cycle: cycle))
        }
        return changes.isEmpty ? nil : CardSchedule(changes)
    }

    /// Who owes whom, typed.
    public func peopleBalances() throws -> PeopleBalances { try store.peopleBalances() }

    /// Income and spending per month (`YYYY-MM`, from … to), category and currency, typed.
    public func monthTotals(from: String, to: String) throws -> [MonthCategoryTotal] { try store.monthTotals(from: from, to: to) }

    /// Every live account, by name.
    public func accountsDocument() throws -> JSONText { .object([("items", try store.accountsJSON())]) }

    /// The latest transfers, newest first (`limit` 1 … `Limits.maxPageSize`).
    public func transfersDocument(limit: Int = Limits.defaultPageSize) throws -> JSONText {
        guard (1...Limits.maxPageSize).contains(limit) else { throw ValidationError(field: "limit", "must be 1 to \(Limits.maxPageSize)") }
        return .object([("items", try store.transfersJSON(limit: limit))])
    }

    /// Every account's balance at the end of `at` (`AsOf` text: a day is its end, a date-time
    /// that second; nil: now), the totals per currency, and with `into` a currency, the net
    /// worth in it: each balance converted at the rate of that day; a balance without a rate
    /// is listed, never dropped silently.
    public func balancesDocument(at text: String?, into currency: String?, timeZone: TimeZone = .current) throws -> JSONText {
        let millis: Int64
        switch try text.map({ try AsOf(parsing: $0, timeZone: timeZone) }) {
        case nil: millis = DateTime.nowHere.epochMillis
        case .endOfSecond(let second)?:
            let (scaled, overflow) = second.multipliedReportingOverflow(by: 1000)
            guard !overflow, scaled <= Int64.max - 999 else { throw ValidationError(field: "at", "is out of range") }
            millis = scaled + 999
        case .index?: throw ValidationError(field: "at", "must be a day or a date-time (a log index is asOf's)")
        }
        if let currency, !Currency.isValid(currency) { throw ValidationError(field: "in", "must be an ISO 4217 code in capitals, such as KRW") }
        let balances = try store.accountBalances(at: millis)
        func amount(_ sum: AmountSum) -> JSONText { sum.value.map { .int($0) } ?? .null }
        var totals: [String: AmountSum] = [:]
        for account in balances { totals[account.currency, default: AmountSum()].add(account.balance) }
        var fields: [(String, JSONText)] = [
            ("at", .string(DateTime(epochMillis: millis, offsetMinutes: 0).description)),
            (
                "items",
                .array(
                    balances.map { account in
                        .object([
                            ("id", .string(account.id)), ("name", .string(account.name)), ("kind", .string(account.kind)),
                            ("currency", .string(account.currency)), ("isArchived", .bool(account.isArchived)), ("balance", amount(account.balance)),
                            ("otherCurrencyExpenses", .int(Int64(account.otherCurrencyExpenses))),
                        ])
                    })
            ),
            ("totals", .array(totals.sorted { $0.key < $1.key }.map { .object([("currency", .string($0.key)), ("balance", amount($0.value))]) })),
        ]
        if let currency {
            let rates = ExchangeRates(try store.liveEntities(.rate))
            let day = Int64(DateTime(epochMillis: millis, offsetMinutes: Int16(clamping: timeZone.secondsFromGMT() / 60)).localDayNumber)
            var worth = AmountSum()
            var unconverted: [JSONText] = []
            for account in balances {
                guard let balance = account.balance.value, let converted = rates.convert(balance, from: account.currency, to: currency, onDay: day) else {
                    unconverted.append(.object([("id", .string(account.id)), ("currency", .string(account.currency)), ("balance", amount(account.balance))]))
                    continue
                }
                worth.add(AmountSum(converted))
            }
            fields.append(("netWorth", .object([("currency", .string(currency)), ("amount", amount(worth)), ("unconverted", .array(unconverted))])))
        }
        return .object(fields)
    }

    /// A card's bills (statements) closing from month `from` through `to` (`YYYY-MM`; default:
    /// the six months through next month, at most 120): each with its cycle, due day, what was
    /// charged and cancelled in it, the amount, and what was paid into the card before its
    /// next close — `paid` when that covers the amount, else `due` (or `overdue` after the day);
    /// `nothing` when there is nothing to pay (or only refunds).
    public func cardBillsDocument(accountID: UUID, from: String?, to: String?) throws -> JSONText {
        func index(_ text: String, _ field: String) throws -> Int {
            guard let index = CardCycle.index(parsing: try ExpenseQuery.month(text)) else { throw ValidationError(field: field, "must be YYYY-MM") }
            return index
        }
        let now = DateTime.nowHere
        let thisMonth = try index(now.localMonth, "to")
        let last = try to.map { try index($0, "to") } ?? thisMonth + 1
        let first = try from.map { try index($0, "from") } ?? last - 6
        guard first <= last, last - first < 120 else { throw ValidationError(field: "from", "must be at most 120 months before to") }
        guard let bills = try store.cardBills(accountID: accountID.lowercased, from: first, to: last, schedule: try cardSchedule(of: accountID.lowercased))
        else {
            throw ValidationError(field: "id", "no card with a closing day has id \(accountID.lowercased)", kind: .notFound)
        }
        let today = CardCycle.dayText(now.localDayNumber)
        func amount(_ sum: AmountSum) -> JSONText { sum.value.map { .int($0) } ?? .null }
        return .object([
            (
                "items",
                .array(
                    bills.map { bill in
                        let settled = (bill.paid.value ?? 0) >= (bill.amount.value ?? .max)
                        let status = (bill.amount.value ?? 1) <= 0 ? "nothing" : settled ? "paid" : (bill.due < today ? "overdue" : "due")
                        return .object([
                            ("month", .string(bill.month)), ("from", .string(bill.from)), ("to", .string(bill.to)), ("due", .string(bill.due)),
                            ("charged", amount(bill.charged)), ("cancelled", amount(bill.cancelled)), ("amount", amount(bill.amount)),
                            ("paid", amount(bill.paid)), ("status", .string(status)),
                        ])
                    })
            )
        ])
    }
}
