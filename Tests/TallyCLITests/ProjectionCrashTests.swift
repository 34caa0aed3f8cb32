import Foundation
import Testing
import TallyTestSupport

/// Kills a process while it projects a long log into the views, several times, and checks that
/// each restart carries on from the checkpoint and ends with exactly the views a rebuild gives.
@Suite struct ProjectionCrashTests {
    @Test func aKilledProjectionCatchesUpCorrectly() throws {
        let replica = try CLIReplica()
        _ = try replica.ok(["debug", "bulk-load", "--count", "40000"])
        var rng = SplitMix64(seed: 7)
        var checkpoints: [Int] = []
        // Kill after a random delay; when a kill finds no progress (a slow build — a sanitizer's —
        // has not committed its first batch yet), the next may wait up to twice as long.
        var longestDelay = 0.6
        for _ in 0..<8 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: TallyBinary.path)
            process.arguments = ["expenses", "list", "--limit", "1", "--data-dir", replica.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: Double.random(in: 0.05...longestDelay, using: &rng))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let status = try JSONSerialization.jsonObject(with: Data(try replica.ok(["status", "--json"]).utf8)) as! [String: Any]
            let projected = status["projectedIndex"] as? Int ?? -1
            if projected == (checkpoints.last ?? 0) { longestDelay = min(longestDelay * 2, 30) }
            checkpoints.append(projected)
        }
        #expect(checkpoints == checkpoints.sorted(), "progress is never lost: \(checkpoints)")
        #expect(checkpoints.contains { $0 > 0 && $0 < 40_000 }, "some kills landed mid-projection: \(checkpoints)")
        let verify = try replica.run(["rebuild-projections", "--verify-only", "--json"])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        #expect(verify.stdout.contains("\"drifted\":false"))
        #expect(verify.stdout.contains("\"events\":40000"))
    }
}
