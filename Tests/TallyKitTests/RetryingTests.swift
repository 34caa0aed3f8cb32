import Foundation
import Testing
@testable import TallyKit
import TallySync
import TallyTestSupport

/// Which failed syncs an app's replica tries again (`Replica.retrying`).
struct RetryingTests {
    func answered(_ status: Int) -> Replica.Retrying {
        Replica.retrying(SyncRejection(source: "push", reason: "the peer answered \(status)", httpStatus: status))
    }

    @Test func aPushCutForItsPaceIsTriedAgainAndARefusalIsNot() {
        #expect(answered(408) == .whenReachable, "cut for its pace or deadline: the next push goes on from what was verified")
        #expect(answered(429) == .whenReachable)
        #expect(answered(503) == .whenReachable)
        #expect(answered(401) == .signInFirst)
        #expect(answered(422) == .never)
        #expect(answered(400) == .never)
        #expect(Replica.retrying(SyncRejection(source: "stream", reason: "a record does not decode")) == .never)
    }
}

/// What a replica remembers of each server it syncs with (`SyncMemory`, `app-sync.json`).
struct SyncMemoryTests {
    /// Found by review: a failed sync records why without the writer lock, so two syncs at
    /// once (two servers, or the app's and its widget's) read the file, each changed its own
    /// server, and the later write lost the other's change.
    @Test func syncsRecordingAtOnceLoseNothing() throws {
        let folder = TemporaryDirectory("sync-memory")
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        let path = folder.path
        let done = DispatchGroup()
        for thread in 0..<8 {
            done.enter()
            Thread.detachNewThread {
                for round in 0..<8 {
                    let index = thread * 8 + round
                    try? SyncMemory.update(path, server: "server \(index)") { $0.refusedBecause = "reason \(index)" }
                }
                done.leave()
            }
        }
        done.wait()
        let memory = SyncMemory.read(path)
        #expect(memory.servers.count == 64)
        #expect(memory.servers["server 7"]?.refusedBecause == "reason 7")
    }
}
