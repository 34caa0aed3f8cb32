import Foundation
import Testing
import TallyTestSupport

/// Issue 30: the CLI's `--json` and the API answer the same JSON, byte for byte, for every
/// entity and every list — both print the documents `LedgerViews` writes.
@Suite(.serialized) struct SameJSONTests {
    @Test func everyEntityAndListIsTheSameJSONFromTheCLIAndTheAPI() async throws {
        let replica = try CLIReplica()
        let month = "2026-03"
        // Entities made by the CLI (no server yet: it holds the writer), printed as JSON.
        var created: [(path: String, json: String)] = []
        func make(_ path: String, _ arguments: [String]) throws -> String {
            let json = try replica.ok(arguments + ["--json"]).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let range = json.range(of: #""id":"[0-9a-f-]{36}""#, options: .regularExpression) else { throw CLIError("no id in \(json)") }
            let id = String(json[range].dropFirst(6).dropLast())
            created.append(("/v1/\(path)/\(id)", json))
            return id
        }
        let food = try make("categories", ["category", "add", "--name", "Food", "--icon", "🍚"])
        _ = try make("categories", ["category", "add", "--name", "Lunch", "--parent", food])
        let lunch = try make(
            "expenses",
            [
                "expense", "add", "--amount", "9500", "--category", food, "--date", "\(month)-03", "--payee", "김밥천국",
                "--tag", "lunch", "--tag", "work", "--memo", "줄\n바꿈 \"quoted\"",
            ])
        _ = try make("expenses", ["expense", "add", "--kind", "income", "--amount", "3200000", "--date", "\(month)-01", "--payee", "Employer"])
        _ = try make("todos", ["todo", "add", "--title", "No coffee", "--checks", "1,0,1", "--challenge"])
        _ = try make("budgets", ["budget", "add", "--category", food, "--amount", "300000", "--from", month])
        _ = try make(
            "recurring", ["recurring", "add", "--cadence", "monthly", "--start", "\(month)-25", "--count", "3", "--amount", "700000", "--payee", "Rent"])
        _ = try make("rules", ["rule", "add", "--pattern", "김밥", "--category", food, "--tag", "snack"])
        _ = try replica.ok(["rates", "set", "USD", "KRW", "1385.2", "--date", "\(month)-01"])
        _ = try replica.ok(["setting", "set", "defaultCurrency", #""KRW""#])
        // An update prints the entity as it now is: that is what GET answers.
        let updated = try replica.ok(["expense", "update", lunch, "--amount", "9800", "--json"]).trimmingCharacters(in: .whitespacesAndNewlines)
        created = created.map { $0.path == "/v1/expenses/\(lunch)" ? ($0.path, updated) : $0 }
        try Data("Date,Description,Amount\n\(month)-05,Coffee,4500\n".utf8).write(to: URL(fileURLWithPath: replica.path + "/card.csv"))
        _ = try replica.ok(["import", "csv", replica.path + "/card.csv"])

        let token = try replica.ok(["token", "create", "--name", "reader", "--scope", "read"])
        let server = try LiveServer(replica)
        defer { server.kill(SIGTERM) }
        for (path, json) in created {
            let answer = try await server.request(.GET, path, token: token)
            #expect(answer.status == 200 && answer.body == json, "\(path)\nAPI: \(answer.body)\nCLI: \(json)")
        }
        // Lists and summaries, read by the CLI beside the running server.
        let lists: [(path: String, arguments: [String])] = [
            ("/v1/expenses?month=\(month)", ["expenses", "list", "--month", month]),
            ("/v1/categories", ["categories", "list"]),
            ("/v1/todos", ["todos", "list"]),
            ("/v1/settings", ["settings", "list"]),
            ("/v1/budgets", ["budgets", "list"]),
            ("/v1/budgets?month=\(month)", ["budgets", "list", "--month", month]),
            ("/v1/rates", ["rates", "list"]),
            ("/v1/rules", ["rules", "list"]),
            ("/v1/recurring", ["recurring", "list"]),
            ("/v1/summary?month=\(month)", ["summary", "--month", month]),
            ("/v1/summary?month=\(month)&in=USD", ["summary", "--month", month, "--in", "USD"]),
            ("/v1/summary/months", ["summary", "--months"]),
            ("/v1/conflicts", ["conflicts"]),
            ("/v1/imports", ["import", "list"]),
            ("/v1/audit/\(lunch)", ["audit", "history", lunch]),
        ]
        for (path, arguments) in lists {
            let cli = try replica.ok(arguments + ["--json"]).trimmingCharacters(in: .whitespacesAndNewlines)
            let answer = try await server.request(.GET, path, token: token)
            #expect(answer.status == 200 && answer.body == cli, "\(path)\nAPI: \(answer.body.prefix(600))\nCLI: \(cli.prefix(600))")
        }
    }
}
