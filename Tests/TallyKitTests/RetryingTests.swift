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

    /// Found by review: a refused password held back for the server's longest lockout only
    /// (15 minutes) was sent again as each lockout ended, and the server's count of failures
    /// (cleared only by a good sign-in) locked the name again at once; held a day at once, the
    /// right password waited a day after a hosted ledger was briefly missing.
    @Test func aRefusedPasswordIsHeldBackLongerEachTimeUpToADay() {
        #expect(Replica.refusedPasswordHold(times: 1) == .seconds(900))
        #expect(Replica.refusedPasswordHold(times: 2) == .seconds(1_800))
        #expect(Replica.refusedPasswordHold(times: 7) == .seconds(57_600))
        #expect(Replica.refusedPasswordHold(times: 8) == .seconds(86_400))
        #expect(Replica.refusedPasswordHold(times: .max) == .seconds(86_400) && Replica.refusedPasswordHold(times: .min) == .seconds(900))
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
    let home = SyncServer(url: "http://127.0.0.1:9", token: "unused")  // each test's transport stands in for it

    /// A phone whose one expense has a 159-byte receipt, and a server whose attachments may
    /// take 100 bytes.
    static func phoneWithAReceiptTooLargeForTheServer(in folder: TemporaryDirectory) async throws -> (Replica, Ledger) {
        let phone = try await Replica.open(at: folder.file("phone"), actor: "minji")
        let server = try Ledger(
            directory: try DataDirectory.create(path: folder.file("server"), name: "server"), limits: LedgerLimits(attachmentBytes: { 100 }))
        let receipt = try await phone.addAttachment(Data("%PDF-1.4\n".utf8) + Data(repeating: 7, count: 150))
        try await phone.create(ExpenseFields(amount: 1_000, attachments: [receipt]))
        return (phone, server)
    }

    @Test func aServerAtItsAttachmentQuotaIsNotTriedAgainAndTheStatusSaysWhy() async throws {
        let folder = TemporaryDirectory("kit-quota")
        let (phone, server) = try await Self.phoneWithAReceiptTooLargeForTheServer(in: folder)
        defer { server.close() }
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

    /// Found by review: each sync after the refusal uploaded the refused blob again (a photo
    /// every 30 s on a phone's data plan), only to be refused again. Now it waits an hour, or
    /// until the app asks, and the status still says it was refused.
    @Test func aRefusedBlobIsNotUploadedAgainWithinTheHour() async throws {
        let folder = TemporaryDirectory("kit-quota-again")
        let (phone, server) = try await Self.phoneWithAReceiptTooLargeForTheServer(in: folder)
        defer { server.close() }
        let uploads = Counter()
        func sync() async throws -> PeerAttachmentsOverQuota? {
            do {
                try await phone.sync(with: home, retry: RetryPolicy(attempts: 1), attachments: .whenAsked) { _ in
                    ServerStandIn(server: LedgerTransport(server, label: "server"), beforeUpload: { uploads.add(1) })
                }
                return nil
            } catch let refused as PeerAttachmentsOverQuota { return refused }
        }
        #expect(try await sync()?.withheld == 0)
        #expect(uploads.value == 1)
        let second = try await sync()
        #expect(second?.refused == 1 && second?.withheld == 1, "still counted as refused")
        #expect(uploads.value == 1, "not uploaded again")
        guard case .refused(let reason) = try phone.syncStatus(with: home) else {
            Issue.record("the status should still say the server refused the attachment")
            return
        }
        #expect(reason.contains("quota"))
        try phone.sendRefusedAttachmentsAgain(to: home)
        #expect(try await sync()?.withheld == 0)
        #expect(uploads.value == 2, "sent again when the app asks")
    }
}
