import Foundation
import Testing
import TallyTestSupport

/// Split receipts and reconciliation from the command line (issue 34).
@Suite struct SplitAndReconcileCLITests {
    @Test func aReceiptSplitFromTheCommandLineKeepsItsUnchangedLines() throws {
        let replica = try CLIReplica()
        let groceries = try replica.ok(["category", "add", "--name", "Groceries"])
        let household = try replica.ok(["category", "add", "--name", "Household"])
        let expense = try replica.ok(["expense", "add", "--amount", "120000", "--payee", "E-Mart", "--date", "2026-11-20"])
        let first = try replica.ok(["split", expense, "--line", "80000,\(groceries)", "--line", "40000,\(household),detergent, sponges", "--json"])
        let lines = { (json: String) -> [[String: Any]] in
            ((try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["lines"] as? [[String: Any]]) ?? []
        }
        #expect(lines(first).compactMap { $0["memo"] as? String } == ["detergent, sponges"], "\(first)")
        let kept = lines(first).first { $0["memo"] as? String == "detergent, sponges" }?["id"] as? String
        let second = try replica.ok(["split", expense, "--line", "70000,\(groceries)", "--line", "50000,\(household),detergent, sponges", "--json"])
        #expect(lines(second).contains { $0["id"] as? String == kept && $0["amount"] as? Int == 50_000 }, "the line of the same category and memo keeps its id")
        let shown = try replica.ok(["split", expense])
        #expect(shown.contains("E-Mart") && shown.contains("70,000") && !shown.contains("Needs attention"), "\(shown)")
        let list = try replica.ok(["splits"])
        #expect(list.contains("adds up") && list.contains(expense), "\(list)")

        let log = try replica.logSnapshot()
        let short = try replica.run(["split", expense, "--line", "1000"])
        #expect(short.status != 0 && short.stderr.contains("add up"), "\(short.stderr)")
        let bad = try replica.run(["split", expense, "--line", "ten,\(groceries)"])
        #expect(bad.status != 0 && bad.stderr.contains("--line"), "\(bad.stderr)")
        let noCategory = try replica.run(["split", expense, "--line", "120000,\(UUID().uuidString)"])
        #expect(noCategory.status != 0 && noCategory.stderr.contains("category"), "\(noCategory.stderr)")
        let missing = try replica.run(["split", UUID().uuidString, "--line", "1"])
        #expect(missing.status != 0 && missing.stderr.contains("no expense"), "\(missing.stderr)")
        #expect(try replica.logSnapshot() == log, "refusals write nothing")
        let cleared = try replica.ok(["split", expense, "--clear"])
        #expect(cleared.contains("Not split"), "\(cleared)")
    }

    @Test func anAccountReconciledFromTheCommandLineShowsItsDifferenceAndLaterChanges() throws {
        let replica = try CLIReplica()
        let bank = try replica.ok(["account", "add", "--name", "Shinhan", "--opening-balance", "100000", "--opening-date", "2026-01-01"])
        let coffee = try replica.ok(["expense", "add", "--amount", "5000", "--account", bank, "--date", "2026-01-05"])
        _ = try replica.ok(["expense", "add", "--amount", "7000", "--account", bank, "--date", "2026-02-05"])
        let never = try replica.ok(["accounts", "reconciliation", bank])
        #expect(never.contains("Not reconciled"), "\(never)")
        _ = try replica.ok(["account", "update", bank, "--reconciled-through", "2026-01-31", "--statement-balance", "95000"])
        var shown = try replica.ok(["accounts", "reconciliation", bank])
        #expect(shown.contains("Difference:        0 KRW") && shown.contains("Cleared lines:     1") && !shown.contains("Changed after"), "\(shown)")
        _ = try replica.ok(["expense", "update", coffee, "--amount", "5500"])
        shown = try replica.ok(["accounts", "reconciliation", bank])
        #expect(shown.contains("Difference:        500 KRW") && shown.contains("Changed after") && shown.contains(coffee), "\(shown)")
        let bad = try replica.run(["accounts", "reconciliation", "nope"])
        #expect(bad.status != 0, "\(bad.stderr)")
    }

    @Test func theYearInReviewAndAMonthByBillFromTheCommandLine() throws {
        let replica = try CLIReplica()
        let card = try replica.ok([
            "account", "add", "--name", "Card", "--kind", "card", "--closing-day", "14", "--payment-day", "1", "--opening-date", "2026-01-01",
        ])
        _ = try replica.ok(["expense", "add", "--amount", "50000", "--payee", "Hotel", "--account", card, "--date", "2026-03-20"])
        _ = try replica.ok(["expense", "add", "--amount", "7000", "--payee", "Lunch", "--date", "2026-03-21"])
        let march = try replica.ok(["summary", "--month", "2026-03", "--by", "bill", "--json"])
        let may = try replica.ok(["summary", "--month", "2026-05", "--by", "bill", "--json"])
        func expense(_ json: String) -> Int? {
            (((try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any])?["totals"] as? [[String: Any]])?.first?["expense"] as? Int
        }
        #expect(expense(march) == 7_000 && expense(may) == 50_000, "\(march) \(may)")
        let bad = try replica.run(["summary", "--month", "2026-05", "--by", "week"])
        #expect(bad.status != 0 && bad.stderr.contains("--by"), "\(bad.stderr)")

        let year = try replica.ok(["year", "2026"])
        #expect(year.contains("2026 in KRW") && year.contains("Busiest month: 2026-03") && year.contains("Hotel"), "\(year)")
        let json = try replica.ok(["year", "2026", "--json"])
        #expect(json.contains(#""largest":[{"#), "\(json)")
        let none = try replica.ok(["year", "1999"])
        #expect(none.contains("Nothing was recorded in 1999"), "\(none)")
        let wrong = try replica.run(["year", "twenty"])
        #expect(wrong.status != 0 && wrong.stderr.contains("year"), "\(wrong.stderr)")
    }
}
