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
}
