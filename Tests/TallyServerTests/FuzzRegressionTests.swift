import Foundation
import Testing
import TallyFuzzing
import TallyLog
import TallyTestSupport

/// Every input a fuzz run found (kept in `Tests/FuzzCorpus/<Target>/`) and every seed goes
/// through the same function the fuzz target calls; none may crash. The seeds must also decode,
/// or the fuzzer would start from garbage.
@Suite struct FuzzRegressionTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("FuzzCorpus").path

    @Test(arguments: ["Segments", "Events", "RequestBodies"])
    func seedsAndFoundInputsReplayWithoutCrashing(target: String) throws {
        let seeds = TemporaryDirectory("fuzz-seeds")
        try FuzzSeeds.write(target: target, to: seeds.path)
        let seedFiles = try FileManager.default.contentsOfDirectory(atPath: seeds.path).map { seeds.path + "/" + $0 }
        #expect(seedFiles.count >= 4)
        let found =
            (try? FileManager.default.contentsOfDirectory(atPath: Self.corpus + "/" + target))?
            .filter { !$0.hasPrefix(".") }.map { Self.corpus + "/" + target + "/" + $0 } ?? []
        for path in seedFiles + found {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            bytes.withUnsafeBytes { FuzzInputs.run(target, $0) }
        }
        if target == "Segments" {
            let decoded = try seedFiles.map { path in
                try Data(contentsOf: URL(fileURLWithPath: path)).withUnsafeBytes { try SegmentBytes.decodeEvents($0, isLast: true) }
            }
            #expect(decoded.reduce(0, +) > 20, "the seed segments hold real events")
        }
    }
}
