import Foundation
import Testing
import TallyTestSupport

/// Accounts and transfers from the command line (issue 34): what the API does, with flags.
@Suite struct AccountCLITests {
    @Test func accountsTransfersAndBalancesFromTheCommandLine() throws {
        let replica = try CLIReplica()
        let bank = try replica.ok(["account", "add", "--name", "Shinhan", "--opening-balance", "100000", "--opening-date", "2026-01-01"])
        let card = try replica.ok(["account", "add", "--name", "Card", "--kind", "card", "--opening-date", "2026-01-01"])
        _ = try replica.ok(["expense", "add", "--amount", "3000", "--account", card, "--date", "2026-01-05"])
        _ = try replica.ok(["transfer", "add", "--from", bank, "--to", card, "--amount", "3000", "--date", "2026-02-01"])
        let json = try replica.ok(["accounts", "balances", "--at", "2026-02-28", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        let items = Dictionary(
            uniqueKeysWithValues: (object?["items"] as? [[String: Any]] ?? []).map { ($0["name"] as? String ?? "", $0["balance"] as? Int ?? -1) })
        #expect(items == ["Shinhan": 97_000, "Card": 0], "\(json)")
        let table = try replica.ok(["accounts", "balances", "--at", "2026-01-31"])
        #expect(table.contains("Shinhan") && table.contains("Total KRW"), "\(table)")

        let log = try replica.logSnapshot()
        let same = try replica.run(["transfer", "add", "--from", bank, "--to", bank, "--amount", "1"])
        #expect(same.status != 0 && same.stderr.contains("two different accounts"), "\(same.stderr)")
        let bad = try replica.run(["accounts", "balances", "--in", "won"])
        #expect(bad.status != 0 && bad.stderr.contains("--in"), "\(bad.stderr)")
        let kind = try replica.run(["account", "add", "--name", "X", "--kind", "crypto"])
        #expect(kind.status != 0 && kind.stderr.contains("kind"), "\(kind.stderr)")
        #expect(try replica.logSnapshot() == log, "refusals write nothing")
    }
}

/// `tally report`: the same report as a table, JSON, or CSV a spreadsheet opens.
@Suite struct ReportCLITests {
    @Test func theReportPrintsAsATableJSONAndCSV() throws {
        let replica = try CLIReplica()
        let food = try replica.ok(["category", "add", "--name", "=Food"])
        _ = try replica.ok(["expense", "add", "--amount", "9000", "--category", food, "--date", "2026-02-10"])
        let csv = try replica.ok(["report", "--to", "2026-03", "--months", "2", "--csv"])
        #expect(csv.hasPrefix("\u{FEFF}CATEGORY,CUR,2026-02,2026-03"), "with the byte-order mark a spreadsheet reads UTF-8 by: \(csv)")
        #expect(csv.contains("'=Food,KRW,9000,0"), "a name that starts like a formula is guarded: \(csv)")
        let json = try replica.ok(["report", "--to", "2026-03", "--months", "2", "--json"])
        #expect(json.contains(#""months":["2026-02","2026-03"]"#))
        let bad = try replica.run(["report", "--months", "0"])
        #expect(bad.status != 0 && bad.stderr.contains("--months"), "\(bad.stderr)")
    }
}

/// `tally people` and `tally settlement`: who owes whom from the command line.
@Suite struct PeopleCLITests {
    @Test func sharedExpensesAndSettlingUpFromTheCommandLine() throws {
        let replica = try CLIReplica()
        _ = try replica.ok(["expense", "add", "--amount", "30000", "--paid-by", "minji", "--split", "equal", "--shares", "minji=1,jisoo=1,hana=1"])
        var people = try replica.ok(["people"])
        #expect(people.contains("hana pays minji 10,000 KRW") && people.contains("jisoo pays minji 10,000 KRW"), "\(people)")
        _ = try replica.ok(["settlement", "add", "--from", "hana", "--to", "minji", "--amount", "10000"])
        people = try replica.ok(["people", "--json"])
        #expect(people.contains(#""settle":[{"from":"jisoo","to":"minji","amount":10000,"currency":"KRW"}]"#), "\(people)")
        let bad = try replica.run(["expense", "add", "--amount", "100", "--paid-by", "a", "--shares", "a=0"])
        #expect(bad.status != 0 && bad.stderr.contains("shares"), "\(bad.stderr)")
        let garbled = try replica.run(["expense", "add", "--amount", "100", "--paid-by", "a", "--shares", "a"])
        #expect(garbled.status != 0 && garbled.stderr.contains("NAME=NUMBER"), "\(garbled.stderr)")
    }

    @Test func aCardsBillsFromTheCommandLine() throws {
        let replica = try CLIReplica()
        let card = try replica.ok([
            "account", "add", "--name", "Card", "--kind", "card", "--closing-day", "14", "--payment-day", "1", "--opening-date", "2026-01-01",
        ])
        _ = try replica.ok(["expense", "add", "--amount", "52000", "--account", card, "--date", "2026-03-10"])
        let table = try replica.ok(["accounts", "bills", card, "--from", "2026-03", "--to", "2026-04"])
        #expect(table.contains("2026-02-15 – 2026-03-14") && table.contains("2026-04-01") && table.contains("52,000"), "\(table)")
        let json = try replica.ok(["accounts", "bills", card, "--from", "2026-03", "--to", "2026-03", "--json"])
        #expect(json.contains(#""charged":52000"#), "\(json)")
        let backwards = try replica.run(["accounts", "bills", card, "--from", "2026-05", "--to", "2026-04"])
        #expect(backwards.status != 0 && backwards.stderr.contains("--from"), "\(backwards.stderr)")
        let bank = try replica.ok(["account", "add", "--name", "Bank"])
        let notCard = try replica.run(["accounts", "bills", bank])
        #expect(notCard.status != 0 && notCard.stderr.contains("no card"), "\(notCard.stderr)")
    }
}
