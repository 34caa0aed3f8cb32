import Foundation
import TallyCore
import TallyStore

/// Where the money is (issue 34, docs/HOUSEHOLD.md "Accounts"): accounts, transfers between
/// them, and each account's balance at a moment — with the net worth across accounts, in one
/// currency when asked (converted at each day's rate, as a month's summary is).
extension LedgerViews {
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
}
