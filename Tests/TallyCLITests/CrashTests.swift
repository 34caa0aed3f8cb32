import Foundation
import Testing
@testable import TallyLog
import TallyCore
import TallyTestSupport

/// Kills a writing process with SIGKILL at random moments and checks that every append it
/// acknowledged is in the log afterwards and that the log reopens cleanly.
@Suite struct CrashTests {
    /// How many kills; CRASH_ROUNDS raises it for soak runs.
    static let rounds = Int(ProcessInfo.processInfo.environment["CRASH_ROUNDS"] ?? "") ?? 100

    @Test func acknowledgedAppendsSurviveSIGKILL() async throws {
        try await offTheCooperativeThreads {
            let replica = try CLIReplica()
            var rng = SplitMix64(seed: UInt64(ProcessInfo.processInfo.environment["CRASH_SEED"] ?? "") ?? 20261121)
            var acknowledged: [String: UInt64] = [:]  // origin → highest acked sequence
            var totalAcks = 0
            for round in 0..<Self.rounds {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: TallyBinary.debugPath)
                process.arguments = ["append-loop", "--data-dir", replica.path, "--threads", "3", "--count", "100000", "--segment-size", "32768"]
                let pipe = Pipe()
                process.standardOutput = pipe
                process.standardError = FileHandle.nullDevice
                try process.run()
                let delay = Double.random(in: 0.05...0.4, using: &rng)
                // A blocking sleep: this runs off the cooperative threads.
                usleep(UInt32(delay * 1_000_000))
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                #expect(process.terminationReason == .uncaughtSignal, "round \(round): the writer was killed, not finished")
                let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                for line in output.split(separator: "\n") {
                    let parts = line.split(separator: " ")
                    // A line cut by the kill is not a complete acknowledgement.
                    guard parts.count == 3, parts[0] == "ack", let sequence = UInt64(parts[2]), output.contains(line + "\n") else { continue }
                    acknowledged[String(parts[1]), default: 0] = max(acknowledged[String(parts[1])] ?? 0, sequence)
                    totalAcks += 1
                }
                // Reopen as a writer (recovery cuts any torn tail), then check nothing acked is missing.
                let directory = try DataDirectory(path: replica.path)
                let writer = try directory.openWriter()
                let head = writer.head
                writer.close()
                for (origin, sequence) in acknowledged {
                    let held = head.chains[ReplicaID(string: origin)!]?.sequence ?? 0
                    #expect(held >= sequence, "round \(round): origin \(origin) acked #\(sequence) but the log holds #\(held)")
                }
            }
            #expect(totalAcks > Self.rounds, "the writer got work done between kills")
            let report = try LogVerifier.verify(directory: replica.path + "/log")
            #expect(report.findings.isEmpty, "\(report.findings)")
            #expect(report.events >= totalAcks)
        }
    }
}
