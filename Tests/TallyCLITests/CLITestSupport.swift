import Foundation
import Testing
import TallyTestSupport

/// A replica created with `tally init` in a temporary directory, driven through the binary.
struct CLIReplica {
    /// A scratch folder of the test's (the data directory is inside it, unless it existed).
    let directory: TemporaryDirectory
    let path: String

    /// `prepare` runs on the data directory's path first (to mount a small disk there, say).
    init(prepare: (String) throws -> Void = { _ in }) throws {
        let directory = TemporaryDirectory("tally-cli")
        (self.directory, path) = (directory, directory.file("data"))
        try prepare(path)
        let result = try run(["init", "--name", "test"])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// A replica that exists already (a TallyKit app's folder), which the caller removes.
    init(existing path: String) { (directory, self.path) = (TemporaryDirectory("tally-cli"), path) }

    @discardableResult
    func run(_ arguments: [String]) throws -> TallyBinary.Result {
        try TallyBinary.run(arguments + ["--data-dir", path], environment: ["TZ": "Asia/Seoul"])
    }

    /// Runs a command that must succeed and returns its trimmed output.
    func ok(_ arguments: [String]) throws -> String {
        let result = try run(arguments)
        #expect(result.status == 0, "tally \(arguments.joined(separator: " ")): \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs a `tally-debug` command on this replica (a load generator) that must succeed.
    @discardableResult
    func debug(_ arguments: [String]) throws -> String {
        let result = try TallyBinary.command(TallyBinary.debugPath, arguments + ["--data-dir", path], environment: ["TZ": "Asia/Seoul"])
        #expect(result.status == 0, "tally-debug \(arguments.joined(separator: " ")): \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Every page of `expenses list --json`, followed by its cursors, as one string.
    func allExpensesJSON() throws -> String {
        var pages: [String] = []
        var cursor: String?
        repeat {
            let page = try ok(["expenses", "list", "--limit", "1000", "--json"] + (cursor.map { ["--cursor", $0] } ?? []))
            pages.append(page)
            cursor = (try JSONSerialization.jsonObject(with: Data(page.utf8)) as? [String: Any])?["nextCursor"] as? String
        } while cursor != nil
        return pages.joined(separator: "\n")
    }

    /// Every byte of every segment file, to show that a refused command changed nothing.
    func logSnapshot() throws -> [String: Data] {
        let log = path + "/log"
        var snapshot: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: log) where name.hasSuffix(".tseg") {
            snapshot[name] = try Data(contentsOf: URL(fileURLWithPath: log + "/" + name))
        }
        return snapshot
    }
}
