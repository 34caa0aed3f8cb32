import Testing
@testable import TallyCore

/// A card's cycles (issue 34): closes clamped to a month's end, due on the first payment day
/// after the close, and a payment credited to the statement it is due for.
@Suite struct CardCycleTests {
    static func day(_ text: String) -> Int { DateTime(iso8601: text + "T00:00:00Z")!.localDayNumber }

    @Test func aPaymentOnADueDayAfterTheNextClosePaysTheStatementDueThatDay() {
        let cycle = CardCycle(closingDay: 30, paymentDay: 31)!
        let april = CardCycle.index(year: 2026, month: 4)
        #expect(CardCycle.dayText(cycle.closes(april)) == "2026-04-30" && CardCycle.dayText(cycle.due(april)) == "2026-05-31")
        #expect(CardCycle.dayText(cycle.closes(april + 1)) == "2026-05-30")
        #expect(cycle.statementPaid(onDay: Self.day("2026-05-31")) == april, "April's statement is due on May 31st")
        #expect(cycle.statementPaid(onDay: Self.day("2026-05-10")) == april)
        #expect(cycle.statementPaid(onDay: Self.day("2026-06-01")) == april + 1, "after April's due day: May's")
    }

    @Test func closingAndPaymentDaysClampToTheMonth() {
        let cycle = CardCycle(closingDay: 31, paymentDay: 14)!
        let february = CardCycle.index(year: 2026, month: 2)
        #expect(CardCycle.dayText(cycle.closes(february)) == "2026-02-28")
        #expect(CardCycle.dayText(cycle.due(february)) == "2026-03-14")
        #expect(cycle.statement(ofDay: Self.day("2026-02-28")) == february && cycle.statement(ofDay: Self.day("2026-03-01")) == february + 1)
        let korean = CardCycle(closingDay: 14, paymentDay: 1)!
        #expect(CardCycle.dayText(korean.due(CardCycle.index(year: 2026, month: 3))) == "2026-04-01")
        #expect(CardCycle(closingDay: 0, paymentDay: 1) == nil && CardCycle(closingDay: 14, paymentDay: 32) == nil)
        #expect(CardCycle(closingDay: 14, paymentDay: nil)?.paymentDay == 14)
    }
}
