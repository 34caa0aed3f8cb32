import Foundation

/// Exchange rates as data (docs/IMPORT.md, "Several currencies"): each `rate` entity says one
/// `currency` is `rate` `toCurrency` from its day on. An amount is converted at the latest rate
/// of its pair on or before its own day (in its own offset); a pair written only the other way
/// round is used inverted. Among rates of one pair and day, the greatest id wins — the same
/// choice on every replica.
public struct ExchangeRates: Sendable {
    struct Quote: Sendable {
        var day: Int64
        var rate: Decimal
        var id: String
    }

    /// Quotes by (from, to), sorted by day then id.
    private var quotes: [String: [Quote]] = [:]

    public init(_ entities: [LedgerState.Entity]) {
        for entity in entities {
            guard case .string(let from)? = entity.value(.currency), case .string(let to)? = entity.value(.toCurrency),
                case .string(let text)? = entity.value(.rate), let rate = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), rate > 0,
                case .dateTime(let date)? = entity.value(.date)
            else { continue }
            quotes[from + ">" + to, default: []].append(Quote(day: Int64(date.localDayNumber), rate: rate, id: entity.id.description))
        }
        for key in quotes.keys { quotes[key]!.sort { ($0.day, $0.id) < ($1.day, $1.id) } }
    }

    /// How many `to` one `from` is on `day` (a local day number), or nil if no rate says.
    public func rate(from: String, to: String, onDay day: Int64) -> Decimal? {
        if from == to { return 1 }
        let direct = Self.latest(of: quotes[from + ">" + to], onOrBefore: day)
        let inverse = Self.latest(of: quotes[to + ">" + from], onOrBefore: day)
        switch (direct, inverse) {
        case let (direct?, inverse?): return direct.day >= inverse.day ? direct.rate : 1 / inverse.rate
        case let (direct?, nil): return direct.rate
        case let (nil, inverse?): return 1 / inverse.rate
        case (nil, nil): return nil
        }
    }

    /// The last of `sorted` (by day, then id) on or before `day`, found by halving: a summary
    /// converts every expense of its month, and walking back over each later quote made one
    /// of 200,000 expenses against 50,000 quotes dated ahead take half a minute (found by review).
    static func latest(of sorted: [Quote]?, onOrBefore day: Int64) -> Quote? {
        guard let sorted else { return nil }
        var (low, high) = (0, sorted.count)  // the first quote after `day` is at `low` once they meet
        while low < high {
            let middle = low + (high - low) / 2
            if sorted[middle].day <= day { low = middle + 1 } else { high = middle }
        }
        return low > 0 ? sorted[low - 1] : nil
    }

    /// `minor` units of `from` in minor units of `to` on `day`, rounded half away from zero;
    /// nil without a rate, or if the result does not fit.
    public func convert(_ minor: Int64, from: String, to: String, onDay day: Int64) -> Int64? {
        guard let rate = rate(from: from, to: to, onDay: day) else { return nil }
        let shift = (Currency.minorUnitDigits[to] ?? 2) - (Currency.minorUnitDigits[from] ?? 2)
        var value = Decimal(minor) * rate
        if shift > 0 { value *= pow(Decimal(10), shift) } else if shift < 0 { value /= pow(Decimal(10), -shift) }
        var rounded = Decimal()
        NSDecimalRound(&rounded, &value, 0, .plain)
        guard rounded.magnitude <= Decimal(Limits.maxAmount) * 1_000 else { return nil }
        return NSDecimalNumber(decimal: rounded).int64Value
    }
}
