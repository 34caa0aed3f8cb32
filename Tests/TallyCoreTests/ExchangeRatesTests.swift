import Foundation
import Testing
@testable import TallyCore
import TallyTestSupport

/// The rate of a day is found by halving the pair's sorted quotes: it must be the one walking
/// back from the newest finds — the last on or before the day, the greatest id among that
/// day's — on every day, before the first quote and after the last included.
@Suite struct ExchangeRatesTests {
    @Test func theQuoteOfADayIsTheLastOnOrBeforeIt() {
        var random = SplitMix64(seed: 41)
        for _ in 0..<500 {
            let quotes = (0..<Int.random(in: 0...40, using: &random)).map { index in
                ExchangeRates.Quote(day: Int64.random(in: 0...30, using: &random), rate: Decimal(index + 1), id: "q\(index)")
            }
            .sorted { ($0.day, $0.id) < ($1.day, $1.id) }
            for day in Int64(-1)...31 {
                let walked = quotes.last { $0.day <= day }
                let halved = ExchangeRates.latest(of: quotes, onOrBefore: day)
                #expect(halved?.id == walked?.id, "day \(day) of \(quotes.map { ($0.day, $0.id) })")
            }
        }
        #expect(ExchangeRates.latest(of: nil, onOrBefore: 5) == nil)
    }
}
