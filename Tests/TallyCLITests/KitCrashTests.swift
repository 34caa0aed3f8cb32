import Foundation
import Testing
import TallyKit
import TallyTestSupport

/// TallyKit's sync, killed: the example app (`tally-household`, TallyKit only) writes offline
/// and is SIGKILLed mid-sync 20 times while a second device keeps adding events for it to pull;
/// in the end every acknowledged write is on the server and on both devices, exactly once.
@Suite struct KitCrashTests {
    /// Runs the example app to the end; its output.
    static func household(_ arguments: [String]) throws -> String {
        let result = try TallyBinary.command(TallyBinary.householdPath, arguments)
        #expect(result.status == 0, "tally-household \(arguments.joined(separator: " ")): \(result.stderr)")
        return result.stdout
    }

    /// The keys of the writes `add-many` acknowledged.
    static func acknowledged(_ output: String) -> [String] {
        output.split(separator: "\n").compactMap { $0.hasPrefix("ack ") ? String($0.dropFirst(4)) : nil }
    }

    /// Every expense memo of a replica's folder, with how often it occurs.
    static func memos(_ folder: String) async throws -> [String: Int] {
        let replica = try await Replica.open(at: folder, actor: "checker")
        var counts: [String: Int] = [:]
        var cursor: String?
        repeat {
            let page = try replica.query.expensePage(limit: 1_000, after: cursor)
            for expense in page.rows { counts[expense.memo ?? "", default: 0] += 1 }
            cursor = page.nextCursor
        } while cursor != nil
        return counts
    }

    @Test func killedMidSyncTwentyTimesEveryAcknowledgedWriteEndsUpEverywhereOnce() async throws {
        try await offTheCooperativeThreads {
            let serverReplica = try CLIReplica()
            let token = try serverReplica.ok(["token", "create", "--name", "phones", "--scope", "replicate"])
            let server = try LiveServer(serverReplica)
            let devices = TemporaryDirectory("kit-devices")
            let (phoneA, phoneB) = (devices.file("a"), devices.file("b"))
            let sync = ["--server", server.url, "--token", token]
            var acked: [String] = []
            var killedWhileRunning = 0
            for round in 0..<20 {
                acked += Self.acknowledged(try Self.household(["add-many", "10", "--key-prefix", "a\(round)", "--data", phoneA, "--actor", "a"]))
                acked += Self.acknowledged(try Self.household(["add-many", "60", "--key-prefix", "b\(round)", "--data", phoneB, "--actor", "b"]))
                _ = try Self.household(["sync", "--data", phoneB] + sync)  // something for A to pull

                let process = Process()
                process.executableURL = URL(fileURLWithPath: TallyBinary.householdPath)
                process.arguments = ["sync", "--data", phoneA] + sync
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                usleep(UInt32.random(in: 2_000...40_000))
                if process.isRunning {
                    kill(process.processIdentifier, SIGKILL)
                    killedWhileRunning += 1
                }
                waitForExit(process)
            }
            #expect(killedWhileRunning >= 10, "most kills landed while the sync ran (\(killedWhileRunning) of 20)")
            _ = try Self.household(["sync", "--data", phoneA] + sync)
            _ = try Self.household(["sync", "--data", phoneB] + sync)
            #expect(try Self.household(["status", "--data", phoneA] + sync).contains("up to date"))
            #expect(acked.count == 20 * 70)
            server.kill(SIGTERM)
            let expected = Dictionary(uniqueKeysWithValues: acked.map { ($0, 1) })
            #expect(try await Self.memos(serverReplica.path) == expected, "the server holds every acknowledged write once")
            #expect(try await Self.memos(phoneA) == expected)
            #expect(try await Self.memos(phoneB) == expected)
        }
    }
}
