import Foundation
import GRDB
import PropertyBased
import Testing
@testable import TallyStore
import TallyCore
import TallyLog
import TallyTestSupport

/// Card bills (issue 34) against a brute-force assignment of purchases to statements worked
/// out with Foundation's calendar: random closing and payment days (29th–31st included),
/// purchases and cancellations on random days and time zones over a year, payments.
@Suite struct CardBillTests {
    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// The day a statement of (year, month) closes on: the closing day, or the month's last.
    static func close(_ year: Int, _ month: Int, _ day: Int) -> Date {
        let first = calendar.date(from: DateComponents(year: year, month: month, day: 1))!
        let days = calendar.range(of: .day, in: .month, for: first)!.count
        return calendar.date(from: DateComponents(year: year, month: month, day: min(day, days)))!
    }

    /// Which statement (year, month) a purchase on `day` (a UTC midnight) is on, by walking
    /// statements forward: the first whose close is on or after it.
    static func statement(of day: Date, closing: Int) -> (Int, Int) {
        var components = calendar.dateComponents([.year, .month], from: day)
        var (year, month) = (components.year!, components.month! - 1)
        if month == 0 { (year, month) = (year - 1, 12) }
        while close(year, month, closing) < day {
            month += 1
            if month == 13 { (year, month) = (year + 1, 1) }
        }
        components = DateComponents(year: year, month: month)
        return (components.year!, components.month!)
    }

    /// The card `card`, with its days now.
    static func insertCard(_ db: Database, closing: Int, payment: Int) throws {
        try db.execute(
            sql: """
                INSERT INTO accounts (id, name, kind, currency, opening_balance, opening_date, is_archived, opening_ms, closing_day, payment_day)
                VALUES ('card', 'Card', 'card', 'KRW', 0, '2026-01-01T00:00:00Z', 0, 0, ?, ?)
                """, arguments: [closing, payment])
    }

    @Test func billsEqualABruteForceAssignmentOfPurchasesToCycles() async {
        await propertyCheck(count: 50, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = SplitMix64(seed: seed)
            let closing = [1, 14, 15, 28, 29, 30, 31, Int.random(in: 1...31, using: &rng)].randomElement(using: &rng)!
            let payment = Int.random(in: 1...31, using: &rng)
            let queue = try! emptyViews()
            var expected: [String: (charged: Int64, cancelled: Int64)] = [:]
            try! queue.write { db in
                try Self.insertCard(db, closing: closing, payment: payment)
                for number in 0..<60 {
                    let offset = [540, 0, -300].randomElement(using: &rng)!
                    let local = Int64(Int.random(in: 0..<365, using: &rng)) * 86_400_000 + Int64.random(in: 0..<86_400_000, using: &rng)
                    let date = DateTime(epochMillis: 1_767_225_600_000 + local - Int64(offset) * 60_000, offsetMinutes: Int16(offset))
                    let isIncome = Int.random(in: 0..<5, using: &rng) == 0
                    let amount = Int64.random(in: 1...500_000, using: &rng)
                    try db.execute(
                        sql: """
                            INSERT INTO expenses (id, kind, amount, currency, date, date_ms, month, repeat, tags, attachments, account_id)
                            VALUES (?, ?, ?, 'KRW', ?, ?, ?, 'none', '[]', '[]', 'card')
                            """, arguments: ["e\(number)", isIncome ? "income" : "expense", amount, date.description, date.epochMillis, date.localMonth])
                    let day = Date(timeIntervalSince1970: Double(date.localDayNumber) * 86_400)
                    let (year, month) = Self.statement(of: day, closing: closing)
                    let key = String(format: "%04d-%02d", year, month)
                    var sums = expected[key] ?? (0, 0)
                    if isIncome { sums.cancelled += amount } else { sums.charged += amount }
                    expected[key] = sums
                }
            }
            let bills = try! queue.read {
                try ProjectionQueries.cardBills($0, accountID: "card", from: CardCycle.index(year: 2026, month: 1), to: CardCycle.index(year: 2027, month: 1))
            }!
            for bill in bills {
                let sums = expected[bill.month] ?? (0, 0)
                #expect(bill.charged.value == sums.charged && bill.cancelled.value == sums.cancelled, "seed \(seed), closing \(closing): \(bill.month)")
                // The cycle's last day is the close; the due day is the first payment day after it.
                let (year, month) = (Int(bill.month.prefix(4))!, Int(bill.month.suffix(2))!)
                let close = Self.close(year, month, closing)
                #expect(bill.to == String(format: "%04d-%02d-%02d", year, month, Self.calendar.component(.day, from: close)))
                var due = Self.close(year, month, payment)
                if due <= close { due = Self.close(month == 12 ? year + 1 : year, month == 12 ? 1 : month + 1, payment) }
                let parts = Self.calendar.dateComponents([.year, .month, .day], from: due)
                #expect(bill.due == String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!), "seed \(seed)")
            }
            #expect(bills.count == 13)
        }
    }

    /// A card whose closing and payment days changed: each statement month closes and is due by
    /// the days of its own month (`CardSchedule`), a purchase after one month's close on the
    /// next month's statement, against the same walk with each month's closing day.
    @Test func aCardWhoseDaysChangedKeepsEachMonthsOwnDays() async {
        await propertyCheck(count: 50, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = SplitMix64(seed: seed)
            let days = (0..<3).map { _ in
                ([1, 14, 15, 28, 29, 30, 31, Int.random(in: 1...31, using: &rng)].randomElement(using: &rng)!, Int.random(in: 1...31, using: &rng))
            }
            let changes = [
                Int.min, CardCycle.index(year: 2026, month: Int.random(in: 2...6, using: &rng)),
                CardCycle.index(year: 2026, month: Int.random(in: 7...12, using: &rng)),
            ]
            // A third of the time, the middle change clears the closing day: months with no statement.
            let cleared = Int.random(in: 0..<3, using: &rng) == 0
            let schedule = CardSchedule(
                zip(changes, days).enumerated().map { index, change in
                    CardSchedule.Change(from: change.0, cycle: cleared && index == 1 ? nil : CardCycle(closingDay: change.1.0, paymentDay: change.1.1))
                })
            func daysOf(_ year: Int, _ month: Int) -> (closing: Int, payment: Int)? {
                let index = CardCycle.index(year: year, month: month)
                let which = changes.lastIndex { $0 <= index } ?? 0
                return cleared && which == 1 ? nil : days[which]
            }
            let queue = try! emptyViews()
            var expected: [String: Int64] = [:]
            try! queue.write { db in
                try Self.insertCard(db, closing: days[2].0, payment: days[2].1)
                for number in 0..<60 {
                    let local = Int64(Int.random(in: 31..<365, using: &rng)) * 86_400_000 + Int64.random(in: 0..<86_400_000, using: &rng)
                    let date = DateTime(epochMillis: 1_767_225_600_000 + local - 540 * 60_000, offsetMinutes: 540)
                    let amount = Int64.random(in: 1...500_000, using: &rng)
                    try db.execute(
                        sql: """
                            INSERT INTO expenses (id, kind, amount, currency, date, date_ms, month, repeat, tags, attachments, account_id)
                            VALUES (?, 'expense', ?, 'KRW', ?, ?, ?, 'none', '[]', '[]', 'card')
                            """, arguments: ["e\(number)", amount, date.description, date.epochMillis, date.localMonth])
                    // Walk statements forward, each month closing by its own day.
                    let day = Date(timeIntervalSince1970: Double(date.localDayNumber) * 86_400)
                    let parts = Self.calendar.dateComponents([.year, .month], from: day)
                    var (year, month) = (parts.year!, parts.month! - 1)
                    if month == 0 { (year, month) = (year - 1, 12) }
                    while daysOf(year, month).map({ Self.close(year, month, $0.closing) < day }) ?? true {
                        month += 1
                        if month == 13 { (year, month) = (year + 1, 1) }
                    }
                    expected[String(format: "%04d-%02d", year, month), default: 0] += amount
                }
            }
            let bills = try! queue.read {
                try ProjectionQueries.cardBills(
                    $0, accountID: "card", from: CardCycle.index(year: 2026, month: 2), to: CardCycle.index(year: 2027, month: 1), schedule: schedule)
            }!
            for bill in bills {
                #expect(bill.charged.value == expected[bill.month] ?? 0, "seed \(seed): \(bill.month)")
                let (year, month) = (Int(bill.month.prefix(4))!, Int(bill.month.suffix(2))!)
                guard let (closing, payment) = daysOf(year, month) else {
                    Issue.record("seed \(seed): a statement in \(bill.month), a month with none")
                    continue
                }
                let close = Self.close(year, month, closing)
                #expect(bill.to == String(format: "%04d-%02d-%02d", year, month, Self.calendar.component(.day, from: close)), "seed \(seed)")
                var due = Self.close(year, month, payment)
                if due <= close { due = Self.close(month == 12 ? year + 1 : year, month == 12 ? 1 : month + 1, payment) }
                let dueParts = Self.calendar.dateComponents([.year, .month, .day], from: due)
                #expect(bill.due == String(format: "%04d-%02d-%02d", dueParts.year!, dueParts.month!, dueParts.day!), "seed \(seed)")
            }
            let months = (2...13).filter { daysOf($0 > 12 ? 2027 : 2026, $0 > 12 ? 1 : $0) != nil }
            #expect(bills.count == months.count, "seed \(seed): one bill per month with statements")
            // Every purchase of the statements' span is on one of them.
            let billed = bills.reduce(Int64(0)) { $0 + ($1.charged.value ?? 0) }
            #expect(billed == expected.filter { $0.key >= "2026-02" && $0.key <= "2027-01" }.values.reduce(0, +), "seed \(seed)")
        }
    }
}
