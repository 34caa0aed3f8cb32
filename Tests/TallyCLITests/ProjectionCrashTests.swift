import Foundation
import Testing
import TallyLog
import TallyStore
import TallyTestSupport

/// Kills a process while it projects a long log into the views, several times, and checks that
/// each restart carries on from the checkpoint and ends with exactly the views a rebuild gives.
@Suite struct ProjectionCrashTests {
    /// Catch-up in batches (views already hold something): progress committed batch by batch survives.
    @Test func aKilledProjectionCatchesUpCorrectly() async throws {
        try await offTheCooperativeThreads {
            let replica = try CLIReplica()
            _ = try replica.debug(["bulk-load", "--count", "1000"])
            _ = try replica.ok(["expenses", "list", "--limit", "1"])  // the first load; later catch-ups go in batches
            _ = try replica.debug(["bulk-load", "--count", "39000"])
            var rng = SplitMix64(seed: 7)
            // The first kill lands right after the first batch commits, whatever the machine's speed.
            var checkpoints: [Int] = [try projectedAfterKill(replica, onceBeyond: 1_000)]
            // Then kills after a random delay; when a kill finds no progress (a slow build — a
            // sanitizer's — has not committed its next batch yet), the next may wait up to twice as long.
            var longestDelay = 0.6
            for _ in 0..<7 {
                let projected = try projectedAfterKill(replica, after: Double.random(in: 0.05...longestDelay, using: &rng))
                if projected == (checkpoints.last ?? 1_000) { longestDelay = min(longestDelay * 2, 30) }
                checkpoints.append(projected)
            }
            #expect(checkpoints == checkpoints.sorted(), "progress is never lost: \(checkpoints)")
            #expect(checkpoints.contains { $0 > 1_000 && $0 < 40_000 }, "some kills landed mid-projection: \(checkpoints)")
            let verify = try replica.run(["rebuild-projections", "--verify-only", "--json"])
            #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
            #expect(verify.stdout.contains("\"drifted\":false"))
            #expect(verify.stdout.contains("\"events\":40000"))
        }
    }

    /// The first load into empty views is all or nothing: a kill leaves the views empty or
    /// complete, never half-written, and the next run finishes it.
    @Test func aKilledFirstLoadLeavesEmptyOrCompleteViews() async throws {
        try await offTheCooperativeThreads {
            let replica = try CLIReplica()
            _ = try replica.debug(["bulk-load", "--count", "60000"])
            var rng = SplitMix64(seed: 11)
            var states: [Int] = []
            for _ in 0..<4 {
                states.append(try projectedAfterKill(replica, after: Double.random(in: 0.05...0.8, using: &rng)))
            }
            #expect(states.allSatisfy { $0 == 0 || $0 == 60_000 }, "empty or complete: \(states)")
            _ = try replica.ok(["expenses", "list", "--limit", "1"])
            let verify = try replica.run(["rebuild-projections", "--verify-only", "--json"])
            #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
            #expect(verify.stdout.contains("\"drifted\":false"))
            #expect(verify.stdout.contains("\"events\":60000"))
            // A first load this large writes a new generation; one a kill left half-written was replaced.
            let generations = try FileManager.default.contentsOfDirectory(atPath: replica.path).filter {
                $0.hasPrefix("projections-") && $0.hasSuffix(".sqlite")
            }
            #expect(generations == [try FileManager.default.destinationOfSymbolicLink(atPath: replica.path + "/projections.sqlite")], "\(generations)")
        }
    }

    /// Starts a query (which catches the views up first), SIGKILLs it after `delay` seconds,
    /// and returns the log index the views then reflect.
    func projectedAfterKill(_ replica: CLIReplica, after delay: Double) throws -> Int {
        try projectedAfterKill(replica) { Thread.sleep(forTimeInterval: delay) }
    }

    /// The same, killing it as soon as the views' checkpoint passes `index` (read beside it,
    /// every 2 ms, for up to 120 s).
    func projectedAfterKill(_ replica: CLIReplica, onceBeyond index: UInt64) throws -> Int {
        let views = try Projector(directory: try DataDirectory(path: replica.path))
        return try projectedAfterKill(replica) {
            let deadline = Date().addingTimeInterval(120)
            while (try? views.checkpoint()) ?? 0 <= index, Date() < deadline { usleep(2_000) }
        }
    }

    func projectedAfterKill(_ replica: CLIReplica, waitingFor moment: () throws -> Void) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TallyBinary.path)
        process.arguments = ["expenses", "list", "--limit", "1", "--data-dir", replica.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try moment()
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let status = try JSONSerialization.jsonObject(with: Data(try replica.ok(["status", "--json"]).utf8)) as! [String: Any]
        return status["projectedIndex"] as? Int ?? -1
    }
}
