import Foundation
import Testing
import TallyTestSupport

/// Kills a new replica's first `tally segments import` — which copies the bundle's segment
/// files beside the log, verifies them, renames them in and then first-loads the views — at
/// random moments, and checks that the log always opens and verifies and that importing again
/// completes it with views equal to a rebuild.
@Suite struct ImportCrashTests {
    @Test func aKilledFirstImportLeavesAValidLogAndARetryCompletesIt() async throws {
        try await offTheCooperativeThreads {
            let source = try CLIReplica()
            _ = try source.debug(["bulk-load", "--count", "280000"])  // two segment files
            let bundle = source.directory.file("bundle")
            _ = try source.ok(["segments", "export", "--out", bundle])
            // A kill can leave the log empty, holding whole segments of the bundle (renamed in oldest
            // first), or complete — never part of a segment.
            let names = try FileManager.default.contentsOfDirectory(atPath: bundle).filter { $0.hasSuffix(".tseg") }.sorted()
            #expect(names.count == 2)
            let possible: Set<Int> = [0, Int(names[1].prefix(16), radix: 16)! - 1, 280_000]
            var rng = SplitMix64(seed: 23)
            var heldAfterKill: [Int] = []
            for round in 0..<2 {
                let target = try CLIReplica()
                let process = Process()
                process.executableURL = URL(fileURLWithPath: TallyBinary.path)
                process.arguments = ["segments", "import", bundle, "--data-dir", target.path]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                // The first round lands in the copy or verification, the second (mostly) later.
                // A blocking sleep: this runs off the cooperative threads.
                usleep(UInt32((round == 0 ? Double.random(in: 0.05...0.8, using: &rng) : Double.random(in: 1.5...4, using: &rng)) * 1_000_000))
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()

                let audit = try target.run(["audit", "verify"])
                #expect(audit.status == 0, "the log opens and verifies after the kill: \(audit.stdout) \(audit.stderr)")
                let status = try JSONSerialization.jsonObject(with: Data(try target.ok(["status", "--json"]).utf8)) as! [String: Any]
                heldAfterKill.append(status["events"] as? Int ?? -1)

                _ = try target.ok(["segments", "import", bundle])
                #expect(!FileManager.default.fileExists(atPath: target.path + "/log/adopting"), "staged copies are gone")
                #expect(try target.ok(["audit", "verify"]).contains("intact: 280000 events"))
                if round == 1 {
                    let verify = try target.run(["rebuild-projections", "--verify-only", "--json"])
                    #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
                    #expect(verify.stdout.contains("\"drifted\":false"))
                    #expect(verify.stdout.contains("\"events\":280000"))
                }
            }
            #expect(heldAfterKill.allSatisfy(possible.contains), "\(heldAfterKill) not in \(possible)")
        }
    }
}
