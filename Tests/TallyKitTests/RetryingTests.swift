import Foundation
import Synchronization
import Testing
@testable import TallyKit
import TallyLedger
import TallyLog
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

/// Found by review: a server at its attachment quota refused some of the replica's blobs after
/// the events had gone both ways, and the sync took that for a server out of reach — tried six
/// times, each sending the refused blobs again, then "offline since …" for good, with changes
/// the server held counted as waiting.
@Suite struct AttachmentQuotaSyncTests {
    @Test func aServerAtItsAttachmentQuotaIsNotTriedAgainAndTheStatusSaysWhy() async throws {
        let folder = TemporaryDirectory("kit-quota")
        let phone = try await Replica.open(at: folder.file("phone"), actor: "minji")
        let server = try Ledger(
            directory: try DataDirectory.create(path: folder.file("server"), name: "server"), limits: LedgerLimits(attachmentBytes: { 100 }))
        defer { server.close() }
        let receipt = try await phone.addAttachment(Data("%PDF-1.4\n".utf8) + Data(repeating: 7, count: 150))
        try await phone.create(ExpenseFields(amount: 1_000, attachments: [receipt]))
        let home = SyncServer(url: "http://127.0.0.1:9", token: "unused")  // the transport below stands in for it
        let tries = Mutex(0)
        await #expect(throws: PeerAttachmentsOverQuota.self) {
            try await phone.sync(with: home, retry: RetryPolicy(attempts: 6, first: .milliseconds(1)), attachments: .whenAsked) { _ in
                tries.withLock { $0 += 1 }
                return LedgerTransport(server, label: "server")
            }
        }
        #expect(tries.withLock { $0 } == 1, "not tried again")
        #expect(server.vector.covers(try Ledger.vector(of: try phone.directory)), "the events went")
        guard case .refused(let reason) = try phone.syncStatus(with: home) else {
            Issue.record("the status should say the server refused the attachment: \(try phone.syncStatus(with: home))")
            return
        }
        #expect(reason.contains("quota"))
    }
}
