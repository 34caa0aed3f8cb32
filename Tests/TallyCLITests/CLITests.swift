import Foundation
import Testing
import TallyCore
import TallyTestSupport

@Suite struct CLITests {
    @Test func aNewUserCanRecordAndReadBack() throws {
        let replica = try CLIReplica()
        let food = try replica.ok(["category", "add", "--name", "Food"])
        let lunch = try replica.ok(["category", "add", "--name", "Lunch", "--parent", food])
        let expense = try replica.ok(["expense", "add", "--amount", "12000", "--category", lunch, "--date", "2026-03-01", "--tag", "work", "--memo", "김밥"])
        #expect(UUID(uuidString: expense) != nil, "add prints the id alone")
        let updated = try replica.ok(["expense", "update", expense, "--amount", "13000", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(updated.utf8)) as! [String: Any]
        #expect(object["amount"] as? Int == 13000)
        #expect(object["memo"] as? String == "김밥", "update keeps what it does not name")
        #expect(object["date"] as? String == "2026-03-01T00:00:00+09:00", "a bare date is local midnight")
        #expect(object["categoryId"] as? String == lunch)
        let todo = try replica.ok(["todo", "add", "--title", "No coffee", "--checks", "1,0,1,1", "--challenge", "--json"])
        let todoObject = try JSONSerialization.jsonObject(with: Data(todo.utf8)) as! [String: Any]
        #expect(todoObject["percentage"] as? Double == 75)
        _ = try replica.ok(["setting", "set", "theme", "\"dark\""])
        _ = try replica.ok(["expense", "delete", expense])

        let dump = try replica.ok(["log", "dump", "--json"]).split(separator: "\n")
        #expect(dump.count == 7)
        let history = try JSONSerialization.jsonObject(with: Data(try replica.ok(["audit", "history", expense, "--json"]).utf8)) as! [String: Any]
        let events = history["events"] as? [[String: Any]] ?? []
        #expect(events.count == 3)
        #expect(events.last?["operation"] as? String == "delete")
        #expect(try replica.ok(["audit", "verify"]).hasPrefix("intact: 7 events"))
        let status = try JSONSerialization.jsonObject(with: Data(try replica.ok(["status", "--json"]).utf8)) as! [String: Any]
        #expect(status["events"] as? Int == 7)
    }

    /// Each bad command exits non-zero with a one-line error and leaves the log byte-for-byte as it was.
    @Test func badInputChangesNothing() throws {
        let replica = try CLIReplica()
        let expense = try replica.ok(["expense", "add", "--amount", "500"])
        let unknown = "8b1a9953-c461-4b3e-9f5c-1d6a3b1e2f00"
        let before = try replica.logSnapshot()
        let badCommands: [[String]] = [
            ["expense", "add", "--amount", "-5"],
            ["expense", "add", "--amount", "0"],
            ["expense", "add", "--amount", "12.5"],
            ["expense", "add", "--amount", "1e3"],
            ["expense", "add", "--amount", "99999999999999999999"],
            ["expense", "add", "--memo", "no amount"],
            ["expense", "add", "--amount", "5", "--date", "2026-02-30"],
            ["expense", "add", "--amount", "5", "--date", "tomorrow"],
            ["expense", "add", "--amount", "5", "--currency", "EURO"],
            ["expense", "add", "--amount", "5", "--kind", "gift"],
            ["expense", "add", "--amount", "5", "--category", "not-a-uuid"],
            ["expense", "add", "--amount", "5", "--category", unknown],
            ["expense", "update", unknown, "--amount", "5"],
            ["expense", "update", "not-a-uuid", "--amount", "5"],
            ["expense", "update", expense],
            ["expense", "delete", unknown],
            ["category", "add"],
            ["category", "add", "--name", "  "],
            ["category", "add", "--name", "Sub", "--parent", unknown],
            ["todo", "add", "--title", "x", "--checks", "1,2"],
            ["todo", "add", "--title", "x", "--start", "the second"],
            ["setting", "set", "theme", "dark"],
            ["setting", "delete", "neverSet"],
            ["setting", "set", "not-a-key", "1"],
            ["category", "delete", expense],
        ]
        for command in badCommands {
            let result = try replica.run(command)
            #expect(result.status != 0, "\(command) should fail")
            #expect(result.stderr.hasPrefix("Error: "), "\(command): \(result.stderr)")
            let firstLine = result.stderr.split(separator: "\n").first ?? ""
            #expect(firstLine.count > 12, "\(command) explains itself: \(result.stderr)")
        }
        #expect(try replica.logSnapshot() == before)
    }

    @Test func aCategoryCannotBecomeItsOwnAncestor() throws {
        let replica = try CLIReplica()
        let parent = try replica.ok(["category", "add", "--name", "A"])
        let child = try replica.ok(["category", "add", "--name", "B", "--parent", parent])
        let result = try replica.run(["category", "update", parent, "--parent", child])
        #expect(result.status != 0)
        #expect(result.stderr.contains("ancestor"))
    }

    @Test func verifyFailsLoudlyOnATamperedLog() throws {
        let replica = try CLIReplica()
        for amount in 1...5 { _ = try replica.ok(["expense", "add", "--amount", String(amount * 100)]) }
        let segment = replica.path + "/log/0000000000000001.tseg"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: segment))
        bytes[bytes.count / 2] ^= 0x10
        try bytes.write(to: URL(fileURLWithPath: segment))
        let result = try replica.run(["audit", "verify"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("segment 0000000000000001.tseg offset"))

        let refused = try replica.run(["expense", "add", "--amount", "1"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("log damaged in segment 0000000000000001.tseg at offset"))

        let repair = try replica.run(["log", "repair"])
        #expect(repair.status == 0)
        #expect(repair.stdout.contains("Cut the log in segment 0000000000000001.tseg"))
        // Right after the cut, before any write, a reader sees only what is left in the log.
        let afterCut =
            ((try JSONSerialization.jsonObject(with: Data(try replica.ok(["expenses", "list", "--json"]).utf8)) as? [String: Any])?["items"] as? [Any])?.count
        #expect(afterCut == (try replica.ok(["log", "dump", "--json"]).split(separator: "\n").count), "the views were rebuilt with the cut")
        let added = try replica.ok(["expense", "add", "--amount", "1"])
        #expect(try replica.ok(["audit", "verify"]).hasPrefix("intact"))
        // The views had seen events the cut removed: they are rebuilt, and show what the log holds.
        let listed = try replica.allExpensesJSON()
        #expect(listed.contains(added), "an append after a cut is in the views")
        let count =
            ((try JSONSerialization.jsonObject(with: Data(try replica.ok(["expenses", "list", "--json"]).utf8)) as? [String: Any])?["items"] as? [Any])?.count
        let events = try replica.ok(["log", "dump", "--json"]).split(separator: "\n").count
        #expect(count == events, "one expense per event left in the log, no ghost of a cut one")
    }

    /// Option values that once trapped are errors.
    @Test func hostileOptionValuesAreErrorsNotTraps() throws {
        let replica = try CLIReplica()
        let bundle = replica.path + "-bundle"
        _ = try replica.ok(["segments", "export", "--out", bundle])
        for skew in ["-1", "inf", "nan", "1e300"] {
            let result = try replica.run(["segments", "import", bundle, "--max-skew", skew])
            #expect(result.status != 0 && result.stderr.contains("max-skew"), "--max-skew \(skew): \(result.stderr)")
        }
        for amount in ["99999999999999999999", "-5", "0", "1e3", "9223372036854775807"] {
            let result = try replica.run(["expense", "add", "--amount", amount])
            #expect(result.status != 0 && result.stderr.contains("amount"), "--amount \(amount): \(result.stderr)")
        }
        for date in ["9999999-01-01", "2026-02-30", "0000-01-01"] {
            let result = try replica.run(["expense", "add", "--amount", "1", "--date", date])
            #expect(result.status != 0 && result.stderr.contains("date"), "--date \(date): \(result.stderr)")
        }
        for cursor in ["99999999999999999999_x", "-_-", "1_00000000-0000-0000-0000-00000000000G"] {
            let result = try replica.run(["expenses", "list", "--cursor", cursor])
            #expect(result.status != 0 && result.stderr.contains("cursor"), "--cursor \(cursor): \(result.stderr)")
        }
        for date in ["2026-01-01T00:00+18:30", "2026-01-01T00:00-19:00"] {
            let result = try replica.run(["expense", "add", "--amount", "1", "--date", date])
            #expect(result.status != 0 && result.stderr.contains("date"), "--date \(date): \(result.stderr)")
        }
        let actor = try replica.run(["expense", "add", "--amount", "1", "--actor", "bob\u{1B}[31m"])
        #expect(actor.status != 0 && actor.stderr.contains("actor"), "\(actor.stderr)")
        let token = try replica.run(["token", "create", "--name", "ev\u{07}il", "--scope", "read"])
        #expect(token.status != 0 && token.stderr.contains("name"), "\(token.stderr)")
        #expect(try replica.ok(["log", "dump", "--json"]).isEmpty, "nothing was appended")
    }

    /// Found by a hostile review (each failed before its mend): output that could not be
    /// written crashed the CLI (`> /dev/full`); `--out` replaced whatever was at the path with
    /// a file (a FIFO here; `/dev/null` when run as root); `--lock-timeout nan` could wait
    /// forever; `serve --port 99999` listened on another port; an error quoting what was typed
    /// sent the terminal its escape sequences; peers that could never be reached were stored;
    /// a default currency no write could use was kept (and ignored); a to-do could end before
    /// it started; `ledgers list` of a path that is no folder printed nothing, or Foundation's error.
    @Test func failedOutputPathsThatAreNotFilesAndHostileValuesAreHandled() throws {
        let replica = try CLIReplica()
        _ = try replica.ok(["expense", "add", "--amount", "1200"])
        let tally = TallyBinary.path
        let full = try TallyBinary.command("/bin/sh", ["-c", #"exec "$0" export csv --data-dir "$1" > /dev/full"#, tally, replica.path])
        #expect(full.status == 1 && full.stderr.contains("cannot write to standard output: No space left on device"), "\(full.status): \(full.stderr)")
        let fifo = replica.directory.file("out.fifo"), copy = replica.directory.file("copy.csv")
        #expect(mkfifo(fifo, 0o600) == 0)
        let piped = try TallyBinary.command(
            "/bin/sh", ["-c", #"cat "$2" > "$3" & "$0" export csv --data-dir "$1" --out "$2"; status=$?; wait; exit $status"#, tally, replica.path, fifo, copy])
        #expect(piped.status == 0, "\(piped.stderr)")
        var status = stat()
        #expect(lstat(fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO, "the FIFO is still a FIFO")
        #expect(((try? String(contentsOfFile: copy, encoding: .utf8)) ?? "").contains("1200"), "the CSV went through it")
        for timeout in ["nan", "-1", "inf"] {
            let result = try replica.run(["expense", "add", "--amount", "1", "--lock-timeout", timeout])
            #expect(result.status != 0 && result.stderr.contains("--lock-timeout"), "\(timeout): \(result.stderr)")
        }
        for (option, value) in [("--port", "99999"), ("--port", "70000"), ("--sync-interval", "0"), ("--sync-interval", "100000")] {
            let result = try replica.run(["serve", option, value])
            #expect(result.status != 0 && result.stderr.contains(option), "\(option) \(value): \(result.stderr)")
        }
        let escaped = try replica.run(["expense", "update", "\u{1B}[31mX", "--amount", "1"])
        #expect(escaped.status != 0 && escaped.stderr.contains("\\u{1B}[31mX") && !escaped.stderr.contains("\u{1B}"), "\(escaped.stderr)")
        for (name, url, token) in [
            ("p\u{1B}[2J", "http://h/", "t"), ("p", "http://", "t"), ("p", "http://a:99999999999999999999/", "t"), ("p", "http://a:99999/", "t"),
            ("p", "ftp://a/", "t"), ("p", "http://a/", "t\u{7}"),
        ] {
            let result = try replica.run(["peers", "add", name, url, "--token", token])
            #expect(result.status != 0 && !result.stderr.contains("\u{1B}"), "\(url): \(result.stderr)")
        }
        #expect(try replica.ok(["peers", "list"]).contains("http") == false, "no peer was stored")
        for value in [#""usd""#, #""ZZZ""#, "1e400", "7"] {
            let result = try replica.run(["setting", "set", "defaultCurrency", value])
            #expect(result.status != 0 && result.stderr.contains("ISO 4217"), "\(value): \(result.stderr)")
        }
        let backwards = try replica.run(["todo", "add", "--title", "t", "--start", "2026-12-31", "--end", "2026-01-01"])
        #expect(backwards.status != 0 && backwards.stderr.contains("endDate"), "\(backwards.stderr)")
        // Found by the review of these mends: through a link, the write emptied what it pointed
        // at — `--out /dev/stdout >> log` emptied the log — so a link to a file is refused.
        let log = replica.directory.file("app.log"), link = replica.directory.file("link.csv")
        try Data("an earlier line\n".utf8).write(to: URL(fileURLWithPath: log))
        let appended = try TallyBinary.command("/bin/sh", ["-c", #"exec "$0" export csv --data-dir "$1" --out /dev/stdout >> "$2""#, tally, replica.path, log])
        #expect(appended.status != 0 && appended.stderr.contains("it is a link"), "\(appended.stderr)")
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "an earlier line\n", "the log is as it was")
        #expect(symlink(log, link) == 0)
        let linked = try replica.run(["export", "csv", "--out", link])
        let afterLink = try String(contentsOfFile: log, encoding: .utf8)
        #expect(linked.status != 0 && afterLink == "an earlier line\n", "\(linked.stderr)")
        let onAFile = try replica.run(["segments", "export", "--out", copy])
        #expect(onAFile.status != 0 && onAFile.stderr.contains("is a file, not a folder"), "\(onAFile.stderr)")
        for notAFolder in [replica.directory.file("none"), copy] {
            let listed = try TallyBinary.run(["ledgers", "list", "--ledgers", notAFolder])
            #expect(listed.status != 0 && listed.stderr.contains("no folder of ledgers"), "\(listed.stderr)")
        }
        #expect(try replica.ok(["log", "dump", "--json"]).split(separator: "\n").count == 1, "nothing else was appended")
    }

    /// One JSON shape per entity: what `expense add --json` prints is the list's item (and
    /// `GET /v1/expenses/{id}`, which reads the same view JSON); payee flags and filters work;
    /// tables line up for Hangul by display width.
    @Test func aPayeeIsWrittenListedAndTablesLineUpInHangul() throws {
        let replica = try CLIReplica()
        let added = try replica.ok(["expense", "add", "--amount", "4500", "--payee", "스타벅스", "--memo", "라떼 ☕", "--date", "2026-03-05", "--json"])
        _ = try replica.ok(["expense", "add", "--amount", "12000", "--payee", "E-Mart", "--date", "2026-03-06"])
        let page = try JSONSerialization.jsonObject(with: Data(try replica.ok(["expenses", "list", "--payee", "스타벅스", "--json"]).utf8)) as! [String: Any]
        let items = page["items"] as! [[String: Any]]
        #expect(items.count == 1)
        let listed = try JSONSerialization.data(withJSONObject: items[0], options: .sortedKeys)
        let printed = try JSONSerialization.data(withJSONObject: try JSONSerialization.jsonObject(with: Data(added.utf8)), options: .sortedKeys)
        #expect(listed == printed, "add --json prints the entity as lists and GET show it")
        let table = try replica.ok(["expenses", "list"]).split(separator: "\n").map(String.init)
        #expect(table.count == 3)
        let payeeColumn = table.map { line in
            DisplayWidth.of(String(line[..<(line.range(of: "PAYEE") ?? line.range(of: "스타벅스") ?? line.range(of: "E-Mart")!).lowerBound]))
        }
        #expect(Set(payeeColumn).count == 1, "the PAYEE column starts at the same cell on every line: \(table)")
        let summary = try replica.ok(["summary", "--month", "2026-03"])
        #expect(summary.contains("Top payees") && summary.contains("PAYEE"))
        let bad = try replica.run(["expense", "add", "--amount", "1", "--payee", String(repeating: "가", count: Limits.maxShortTextLength + 1)])
        #expect(bad.status != 0 && bad.stderr.contains("payee"))
    }

    @Test func aSecondWriterFailsClearlyAfterItsTimeout() throws {
        let replica = try CLIReplica()
        let log = replica.path + "/log/writer.lock"
        let fd = open(log, O_RDWR)
        #expect(flock(fd, LOCK_EX) == 0)
        defer { close(fd) }
        let result = try replica.run(["expense", "add", "--amount", "5", "--lock-timeout", "0.3"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("another process is writing"))
    }
}
