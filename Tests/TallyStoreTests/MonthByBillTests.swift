import Foundation
import GRDB
import PropertyBased
import Testing
@testable import TallyStore
import TallyCore
import TallyTestSupport

/// A month by bill (issue 34) against a brute-force assignment: random purchases on cards with
/// random closing and payment days, in three time zones and at the edges of days, each counted
/// in the month `CardSchedule.billMonth` gives for the day of its own time zone (parsed from its
/// text, as the card bills do) — one card's days changing, with months of no statements
/// between — the rest by purchase date. Every purchase is counted once.
@Suite struct MonthByBillStoreTests {
    @Test func everyPurchaseCountsInTheMonthItsBillIsDue() async {
        await propertyCheck(count: 40, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = SplitMix64(seed: seed)
            let queue = try! emptyViews()
            var expected: [String: Int64] = [:]
            // The second card's days changed, and for some months it had none: a schedule.
            let later = CardCycle(closingDay: Int.random(in: 1...31, using: &rng), paymentDay: Int.random(in: 1...31, using: &rng))
            let gapFrom = CardCycle.index(year: 2026, month: Int.random(in: 6...9, using: &rng))
            var schedules: [String: CardSchedule] = [:]
            try! queue.write { db in
                let cards = (0..<2).map { index in
                    (
                        id: "card-\(index)", cycle: CardCycle(closingDay: Int.random(in: 1...31, using: &rng), paymentDay: Int.random(in: 1...31, using: &rng))!
                    )
                }
                schedules["card-1"] = CardSchedule([
                    CardSchedule.Change(from: .min, cycle: cards[1].cycle), CardSchedule.Change(from: gapFrom, cycle: nil),
                    CardSchedule.Change(from: gapFrom + Int.random(in: 1...3, using: &rng), cycle: later),
                ])
                for card in cards {
                    try db.execute(
                        sql: """
                            INSERT INTO accounts (id, name, kind, currency, opening_balance, opening_date, is_archived, opening_ms, closing_day, payment_day)
                            VALUES (?, ?, 'card', 'KRW', 0, '2026-01-01T00:00:00Z', 0, 0, ?, ?)
                            """, arguments: [card.id, card.id, card.cycle.closingDay, card.cycle.paymentDay])
                }
                for row in 0..<60 {
                    // Mid-2026 ± a few months, often within minutes of a midnight somewhere.
                    let day = Int64(20_600 + Int.random(in: 0...120, using: &rng))
                    let minute = Bool.random(using: &rng) ? Int64.random(in: 0...1_439, using: &rng) : [0, 1, 1_438, 1_439].randomElement(using: &rng)!
                    let offset = [540, 0, -300, 345].randomElement(using: &rng)!
                    let date = DateTime(epochMillis: (day * 1_440 + minute - Int64(offset)) * 60_000, offsetMinutes: Int16(offset))
                    let account: String? = [nil, "card-0", "card-1"].randomElement(using: &rng)!
                    let currency = Int.random(in: 0..<8, using: &rng) == 0 ? "USD" : "KRW"
                    let amount = Int64.random(in: 1...1_000, using: &rng)
                    try db.execute(
                        sql: """
                            INSERT INTO expenses (id, kind, amount, currency, date, date_ms, month, payment, tags, repeat, attachments, account_id)
                            VALUES (?, 'expense', ?, ?, ?, ?, ?, NULL, '[]', 'none', '[]', ?)
                            """, arguments: ["e\(row)", amount, currency, date.description, date.epochMillis, date.localMonth, account])
                    var month = date.localMonth
                    if let card = cards.first(where: { $0.id == account }), currency == "KRW", let parsed = DateTime(iso8601: date.description) {
                        let schedule = schedules[card.id] ?? CardSchedule(card.cycle)
                        month = schedule.billMonth(ofDay: parsed.localDayNumber).map(CardCycle.text) ?? month
                    }
                    expected["\(month) \(currency)", default: 0] += amount
                }
            }
            var counted: [String: Int64] = [:]
            for index in CardCycle.index(year: 2026, month: 1)...CardCycle.index(year: 2027, month: 3) {
                let month = CardCycle.text(index)
                for total in try! queue.read({ try ProjectionQueries.summary($0, month: month, byBill: true, schedules: schedules) }).totals
                where total.expense != AmountSum() {
                    counted["\(month) \(total.currency)"] = total.expense.value
                }
            }
            #expect(counted == expected, "seed \(seed)")
        }
    }
}
