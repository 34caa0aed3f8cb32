import Foundation
import Testing
@testable import TallyLog
import TallyTestSupport

@Suite struct EarlyWritebackTests {
    /// The kernel accepts the hints while a file grows, and the file is what was written.
    @Test func hintsAreAcceptedAndLeaveTheFileAsWritten() throws {
        let directory = TemporaryDirectory("tally-writeback")
        let path = directory.path + "/file"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        let writeback = EarlyWriteback(path: path, interval: 0.005)
        var written = Data()
        for chunk in 0..<40 {
            let bytes = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ chunk) })
            try handle.write(contentsOf: bytes)
            written.append(bytes)
            Thread.sleep(forTimeInterval: 0.005)
        }
        writeback.stop()
        try handle.close()
        #expect(writeback.acceptedHints.load(ordering: .relaxed) > 0)
        #expect(FileManager.default.contents(atPath: path) == written)
    }

    /// A file that cannot be opened gets no hints, and stopping does not wait for a thread that never ran.
    @Test func aMissingFileIsNoError() {
        let writeback = EarlyWriteback(path: "/nonexistent/tally-writeback")
        writeback.stop()
        #expect(writeback.acceptedHints.load(ordering: .relaxed) == 0)
    }
}
