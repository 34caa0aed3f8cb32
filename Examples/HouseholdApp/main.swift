// A household app and its widget, as small as they can be, using only TallyKit: the
// getting-started example of docs/TALLYKIT.md, and the app the kill tests drive.
//
//   tally-household add      --data DIR --actor NAME AMOUNT [PAYEE] [--key KEY]
//   tally-household add-many --data DIR --actor NAME COUNT --key-prefix P  (prints "ack KEY" per durable write)
//   tally-household list     --data DIR
//   tally-household sync     --data DIR --server URL --token TOKEN
//   tally-household status   --data DIR --server URL --token TOKEN
//   tally-household widget   --data DIR [--check-in TODO_ID]          (the widget: this month, and a check-in)
//   tally-household watch    --data DIR COUNT                         (prints the expense count as it changes)
import Foundation
import TallyKit

/// Prints a line at once (a test reads it while this still runs, or after a kill).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

struct Usage: Error, CustomStringConvertible { let description: String }

/// `--name value` options and the other words, in order.
struct Arguments {
    var options: [String: String] = [:]
    var words: [String] = []

    init(_ arguments: ArraySlice<String>) throws {
        var rest = arguments
        while let word = rest.popFirst() {
            if word.hasPrefix("--") {
                guard let value = rest.popFirst() else { throw Usage(description: "\(word) needs a value") }
                options[String(word.dropFirst(2))] = value
            } else {
                words.append(word)
            }
        }
    }

    func option(_ name: String) throws -> String {
        guard let value = options[name] else { throw Usage(description: "--\(name) is required") }
        return value
    }

    func number(_ position: Int, _ what: String) throws -> Int64 {
        guard position < words.count, let number = Int64(words[position]) else { throw Usage(description: "\(what) must be a whole number") }
        return number
    }
}

func run(_ command: String, _ arguments: Arguments) async throws {
    let replica = try await Replica.open(at: try arguments.option("data"), name: "household app", actor: arguments.options["actor"] ?? "me")
    defer { Task { await replica.releaseWriter() } }
    switch command {
    case "add":
        let payee = arguments.words.count > 1 ? arguments.words[1] : nil
        let id = try await replica.create(ExpenseFields(amount: try arguments.number(0, "AMOUNT"), payee: payee.map { .some($0) }), idempotencyKey: arguments.options["key"])
        print(id.uuidString.lowercased())
    case "add-many":
        let prefix = try arguments.option("key-prefix")
        for number in 0..<(try arguments.number(0, "COUNT")) {
            let key = "\(prefix)-\(number)"
            try await replica.create(ExpenseFields(amount: 1_000 + number, memo: .some(key)), idempotencyKey: key)
            say("ack \(key)")
        }
    case "list":
        for expense in try replica.query.expenses(limit: 1_000) {
            print(expense.date.prefix(10), expense.amount, expense.currency, expense.payee ?? "", expense.memo ?? "")
        }
    case "sync", "status":
        let server = SyncServer(url: try arguments.option("server"), token: try arguments.option("token"))
        if command == "sync" {
            let report = try await replica.sync(with: server, retry: RetryPolicy(attempts: 3, first: .milliseconds(200)))
            print("pulled \(report.pulled), pushed \(report.pushed)")
        }
        print(try replica.syncStatus(with: server))
    case "widget":
        let month = String(ISO8601DateFormatter().string(from: Date()).prefix(7))
        let summary = try replica.query.summary(month: month)
        for total in summary.totals { print("\(month): spent \(total.expense.value.map(String.init) ?? "overflow") \(total.currency)") }
        if let todo = arguments.options["check-in"].flatMap(UUID.init(uuidString:)), var checks = try replica.query.todo(id: todo)?.checks {
            checks.append(true)
            try await replica.update(todo, TodoFields(checks: checks))
            print("checked in")
        }
    case "watch":
        var left = try arguments.number(0, "COUNT")
        for try await count in replica.watch({ try $0.expenses(limit: 1_000).count }) {
            say("expenses \(count)")
            left -= 1
            if left <= 0 { break }
        }
    default:
        throw Usage(description: "unknown command \(command): add, add-many, list, sync, status, widget or watch")
    }
}

let arguments = CommandLine.arguments
do {
    guard arguments.count >= 2 else { throw Usage(description: "usage: tally-household COMMAND --data DIR …") }
    try await run(arguments[1], try Arguments(arguments.dropFirst(2)))
} catch {
    FileHandle.standardError.write(Data("tally-household: \(error)\n".utf8))
    exit(1)
}
