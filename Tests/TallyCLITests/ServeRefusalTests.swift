import Foundation
import Testing
import TallyTestSupport

/// `tally serve` refuses options that cannot mean what they say (issue 32) with a message and a
/// non-zero exit, before it listens or connects anywhere: a cluster's options without hosted
/// ledgers, a node name or an address other nodes could not use, listening everywhere without
/// saying where the other nodes reach it.
@Suite struct ServeRefusalTests {
    let folder = TemporaryDirectory("tally-serve-refusals")
    /// Never connected to: every refusal comes first.
    static let cluster = "postgres://tally@127.0.0.1:9/tally"

    /// Runs `tally serve ARGS`; a serve that is still running after 30 s is killed and fails the test.
    func refusal(_ arguments: [String]) throws -> (status: Int32, message: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TallyBinary.path)
        process.arguments = ["serve", "--port", "0"] + arguments
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
            waitForExit(process)
            Issue.record("tally serve \(arguments.joined(separator: " ")) was not refused: it served")
        }
        return (process.terminationStatus, String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    @Test func aClustersOptionsWithoutHostedLedgersAreRefused() throws {
        let replica = try CLIReplica()
        for options in [["--cluster", Self.cluster], ["--node", "n1"], ["--advertise", "http://10.0.0.5:8080"]] {
            let (status, message) = try refusal(options + ["--data-dir", replica.path])
            #expect(status != 0)
            #expect(message.contains("add --ledgers DIR"), "\(message)")
        }
    }

    @Test(arguments: ["", "bad name", "node/../x", String(repeating: "n", count: 201), "nöde"])
    func aNodeNameOtherNodesCannotUseIsRefused(name: String) throws {
        let (status, message) = try refusal(["--ledgers", folder.file("ledgers"), "--cluster", Self.cluster, "--node", name])
        #expect(status != 0)
        #expect(message.contains("invalid --node"), "\(message)")
    }

    @Test(arguments: ["ftp://10.0.0.5:8080", "http://", "10.0.0.5:8080", "http://10.0.0.5:8080/path"])
    func anAddressOtherNodesCannotUseIsRefused(advertise: String) throws {
        let (status, message) = try refusal(["--ledgers", folder.file("ledgers"), "--cluster", Self.cluster, "--node", "n1", "--advertise", advertise])
        #expect(status != 0)
        #expect(message.contains("invalid --advertise"), "\(message)")
    }

    @Test func listeningEverywhereWithoutSayingWhereOthersReachItIsRefused() throws {
        let (status, message) = try refusal(["--ledgers", folder.file("ledgers"), "--cluster", Self.cluster, "--node", "n1", "--host", "0.0.0.0"])
        #expect(status != 0)
        #expect(message.contains("--advertise"), "\(message)")
    }

    /// The operator's commands on a cluster check their options before they connect, and a
    /// PostgreSQL that does not answer is one clear line within seconds, not a minute of the
    /// connection pool's retries.
    @Test func theOperatorsClusterCommandsRefuseBadOptionsAndSayAtOnceThatPostgreSQLDoesNotAnswer() throws {
        for (arguments, expected) in [
            (["token", "create", "--name", "x", "--ledger", "abc"], "give --cluster too"),
            (["token", "revoke", "x", "--cluster", Self.cluster], "--cluster needs --ledger"),
            (["members", "remove", "x", "--cluster", Self.cluster, "--ledger", "../etc"], "is not a ledger name"),
            (["ledgers", "quota", "abc", "--members", "3"], "give --ledgers DIR"),
            (["ledgers", "quota", "abc", "--members=-1", "--cluster", Self.cluster], "invalid --members"),
        ] {
            let result = try TallyBinary.run(arguments)
            #expect(result.status != 0 && result.stderr.contains(expected), "\(arguments): \(result.stderr)")
        }
        let start = Date()
        let unanswered = try TallyBinary.run(["token", "revoke", "x", "--cluster", Self.cluster, "--ledger", "abc"])
        #expect(unanswered.status != 0 && unanswered.stderr.contains("does not answer"), "\(unanswered.stderr)")
        #expect(unanswered.stderr.split(separator: "\n").count == 1, "one line: \(unanswered.stderr)")
        #expect(Date().timeIntervalSince(start) < 30)
    }

    /// Without --cluster, the token and member lists read the data directory, as before.
    @Test func tokenAndMemberListsReadTheDataDirectoryWithoutACluster() throws {
        let replica = try CLIReplica()
        _ = try replica.ok(["token", "create", "--name", "phone", "--scope", "read"])
        #expect(try replica.ok(["token", "list", "--json"]).contains("\"phone\""))
        #expect(try replica.ok(["members", "list", "--json"]) == "[]")
    }

    /// Found by review: an invitation was stored only for a member who is an owner, and the
    /// operator's own (`tally members invite`, which the README shows) is no member's — every
    /// local invite was refused. The operator's is stored as made.
    @Test func theOperatorInvitesOnALocalLedger() throws {
        let replica = try CLIReplica()
        let code = try replica.ok(["members", "invite", "--role", "member"]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(code.count == 64 && code.allSatisfy(\.isHexDigit), "\(code)")
        let stored = try String(contentsOfFile: replica.path + "/invites.json", encoding: .utf8)
        #expect(stored.contains("\"operator\""), "\(stored)")
    }
}
