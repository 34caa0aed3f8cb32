import Foundation
import TallyCore
import TallyStore

/// Exchange rates (docs/IMPORT.md, "Several currencies"): set by pair and day — setting the
/// same pair and day again replaces the rate (the id is derived from them, on every replica).
extension Ledger {
    /// Sets how many `to` one `from` is from `day` on (`day` as written, its local day counts).
    @discardableResult
    public func setRate(from: String, to: String, rate: String, day: DateTime, actor: String) async throws -> JSONText {
        try await setRates([(from, to, rate, day)], actor: actor)
        return try views.entityJSON(.rate, id: Self.rateID(from: from, to: to, day: day)) ?? .null
    }

    /// Sets many rates as one durable batch (a rate table): each checked first (`WriteRules`
    /// refuses a rate between one currency), none written if one is refused.
    @discardableResult
    public func setRates(_ rates: [(from: String, to: String, rate: String, day: DateTime)], actor: String) async throws -> Int {
        try await blocking { [session] in try Self.writeRates(rates, actor: actor, session) }
    }

    private static func writeRates(_ rates: [(from: String, to: String, rate: String, day: DateTime)], actor: String, _ session: LedgerSession) throws -> Int {
        try session.writeAll(actor: actor) { lookup in
            var seen: Set<UUID> = []
            return try rates.reversed().compactMap { rate -> EventDraft? in  // the last row of a pair and day wins
                var id = Self.rateID(from: rate.from, to: rate.to, day: rate.day)
                guard seen.insert(id).inserted else { return nil }
                let exists = try lookup.live(.uuid(id)) != nil
                // Deleted once: a new rate of its own (among rates of one pair and day, the greatest id counts).
                if !exists, try lookup.entity(.uuid(id)) != nil { id = .random() }
                let properties: PropertyMap =
                    exists
                    ? [.rate: .string(rate.rate)]
                    : [.currency: .string(rate.from), .toCurrency: .string(rate.to), .rate: .string(rate.rate), .date: .dateTime(rate.day)]
                return EventDraft(entityType: .rate, entityID: .uuid(id), operation: exists ? .update : .create, properties: properties, actor: actor)
            }.reversed()
        }
    }

    static func rateID(from: String, to: String, day: DateTime) -> UUID {
        NameBasedUUID.of("tally-rate\u{0}\(from)\u{0}\(to)\u{0}\(day.localDayNumber)")
    }
}

extension LedgerViews {
    /// Every exchange rate, as JSON.
    public func rates() throws -> [JSONText] {
        try store.liveEntities(.rate).map { entity in
            .object([("id", .string(entity.id.description))] + EntitySpec.rate.fieldsJSON(of: entity))
        }
    }

    /// A month's income and expense in one currency: each expense converted at the rate of its
    /// day (`ExchangeRates`); those without a rate are counted and listed, never dropped silently.
    public func convertedSummary(month: String, into currency: String) throws -> JSONText {
        let month = try ExpenseQuery.month(month)
        guard Currency.isValid(currency) else { throw ValidationError(field: "in", "must be an ISO 4217 code in capitals, such as KRW") }
        var filter = ExpenseFilter()
        (filter.month, filter.limit) = (month, Int(Int32.max))
        let (rows, rateEntities) = try store.expenses(filter, with: .rate)
        let rates = ExchangeRates(rateEntities)
        var (income, expense, overflow) = (Int64(0), Int64(0), false)
        var unconverted: [JSONText] = []
        for row in rows {
            guard let date = DateTime(iso8601: row.date),
                let converted = rates.convert(row.amount, from: row.currency, to: currency, onDay: Int64(date.localDayNumber))
            else {
                unconverted.append(
                    .object([
                        ("id", .string(row.id)), ("date", .string(row.date)), ("kind", .string(row.kind)),
                        ("amount", .int(row.amount)), ("currency", .string(row.currency)),
                    ]))
                continue
            }
            if row.kind == "income" {
                let (sum, over) = income.addingReportingOverflow(converted)
                (income, overflow) = (sum, overflow || over)
            } else {
                let (sum, over) = expense.addingReportingOverflow(converted)
                (expense, overflow) = (sum, overflow || over)
            }
        }
        let (net, netOverflow) = income.subtractingReportingOverflow(expense)
        let total = { (value: Int64) -> JSONText in overflow ? .null : .int(value) }
        return .object([
            ("currency", .string(currency)), ("income", total(income)), ("expense", total(expense)),
            ("net", overflow || netOverflow ? .null : .int(net)), ("overflow", .bool(overflow || netOverflow)),
            ("converted", .int(Int64(rows.count - unconverted.count))), ("unconvertedCount", .int(Int64(unconverted.count))),
            ("unconverted", .array(unconverted)),
        ])
    }
}
