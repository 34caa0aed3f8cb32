import Foundation
import NIOCore
import Testing
import TallyCore
@testable import TallyLedger
import TallyLog
import TallySync
import TallyTestSupport

/// Two ledgers in one process syncing through `LedgerTransport`: the transport carries bytes,
/// the ledger verifies and appends them (the bad-delivery contract runs against it in
/// `BadDeliveryContractTests`). Here: replicas converge, blobs follow their events, and two
/// deliveries at once from the same peer take turns instead of failing.
@Suite struct LedgerTransportTests {
    let folder = TemporaryDirectory("tally-ledger-transport")

    func open(_ name: String) throws -> Ledger {
        try Ledger(directory: try DataDirectory.create(path: folder.file(name), name: name))
    }

    @Test func twoLedgersConvergeAndBlobsFollowTheirEvents() async throws {
        let (phone, laptop) = (try open("phone"), try open("laptop"))
        defer { phone.close(); laptop.close() }
        let receipt = try phone.blobs.writer(limit: 1 << 20)
        try receipt.write(Array("a receipt's bytes".utf8))
        let info = try receipt.finish()
        _ = try await phone.create(.expense, [.amount: .int(4_500), .attachments: .strings([info.digest])], actor: "phone")
        _ = try await laptop.create(.expense, [.amount: .int(7_000)], actor: "laptop")

        let report = try await laptop.sync(with: LedgerTransport(phone, label: "phone"))
        #expect(report.pulled == 1 && report.pushed == 1)
        #expect(report.blobsFetched == 1, "the receipt came after its expense")
        #expect(phone.vector == laptop.vector)
        #expect(try laptop.blobs.size(of: info.digest) == info.size)
        #expect(try laptop.views.missingAttachments().isEmpty)

        let again = try await laptop.sync(with: LedgerTransport(phone, label: "phone"))
        #expect(again.pulled == 0 && again.pushed == 0 && again.blobsFetched == 0, "a second sync has nothing to move")
    }

    /// A blob the peer refuses for its attachment quota holds back no other blob: the rest
    /// are sent, and the sync then says what the peer refused (found by a hostile run: the
    /// first refusal stopped every blob sorted after it, at every sync, and the error said
    /// "nothing was applied" though the events had gone both ways).
    @Test func blobsThePeerRefusesForItsQuotaHoldBackNoOthers() async throws {
        let laptop = try open("laptop3")
        let phone = try Ledger(directory: try DataDirectory.create(path: folder.file("phone3"), name: "phone3"), limits: LedgerLimits(attachmentBytes: { 100 }))
        defer { phone.close(); laptop.close() }
        var small: [String] = []
        for (byte, size) in [(UInt8(1), 150), (2, 10), (3, 10)] {
            let info = try laptop.blobs.store(Data(repeating: byte, count: size))
            if size == 10 { small.append(info.digest) }
            _ = try await laptop.create(.expense, [.amount: .int(100), .attachments: .strings([info.digest])], actor: "laptop")
        }
        do {
            _ = try await laptop.sync(with: LedgerTransport(phone, label: "phone"))
            Issue.record("the sync should say that the phone refused a blob")
        } catch let refused as PeerAttachmentsOverQuota {
            #expect(refused.refused == 1)
        }
        #expect(phone.vector == laptop.vector, "the events went across")
        #expect(try small.allSatisfy { try phone.blobs.size(of: $0) == 10 }, "the blobs that fit were sent")
        #expect(try phone.blobs.all().count == 2)
    }

    /// A sync refused after its pull says how many events it kept, not "nothing was applied"
    /// (found by a hostile peer: a good pull, then a 500 on the vector, read as if the pull had
    /// come to nothing).
    @Test func aRefusalAfterThePullSaysWhatWasKept() async throws {
        let (phone, laptop) = (try open("phone2"), try open("laptop2"))
        defer { phone.close(); laptop.close() }
        for amount in [100, 200, 300] { _ = try await phone.create(.expense, [.amount: .int(Int64(amount))], actor: "phone") }
        /// The phone's service, whose vector (asked for after the pull, to push) fails.
        struct FailingAfterPull: ReplicaTransport {
            let inner: LedgerTransport
            var label: String { inner.label }
            func vector() async throws -> VersionVector {
                throw SyncRejection(source: "phone: GET /replication/vector", reason: "the peer answered 500 (internal)", httpStatus: 500)
            }
            func fetch(lacking mine: VersionVector, into receive: (ByteBuffer) throws -> Void) async throws {
                try await inner.fetch(lacking: mine, into: receive)
            }
            func send(_ records: AsyncThrowingStream<ByteBuffer, any Error>) async throws -> SendReport { try await inner.send(records) }
            func fetchBlob(_ digest: String, into receive: (ByteBuffer) throws -> Void) async throws -> Bool {
                try await inner.fetchBlob(digest, into: receive)
            }
            func missingBlobs(_ offered: [String]) async throws -> [String] { try await inner.missingBlobs(offered) }
            func sendBlob(_ digest: String, bytes: ByteBuffer) async throws { try await inner.sendBlob(digest, bytes: bytes) }
        }
        await #expect {
            _ = try await laptop.sync(with: FailingAfterPull(inner: LedgerTransport(phone, label: "phone")))
        } throws: { error in
            (error as? SyncRejection)?.kept == 3 && "\(error)".contains("the 3 events received before it were kept")
                && !"\(error)".contains("nothing was applied")
        }
        #expect(try laptop.views.expenses(ExpenseQuery([])).rows.count == 3)
    }

    /// A pull and a push from the same peer landing together verified the same events against
    /// the same head, and the second to append failed. Now deliveries take turns: both succeed,
    /// and every event is applied exactly once.
    @Test func deliveriesAtTheSameMomentTakeTurns() async throws {
        let source = try DataDirectory.create(path: folder.file("source"), name: "source")
        let writer = try source.openWriter()
        try writer.append((0..<2_000).map { SampleEvents.expenseCreate(amount: Int64($0) + 1) })
        writer.close()
        let (peer, target) = (try Ledger(directory: source), try open("target"))
        defer { peer.close(); target.close() }
        for round in 0..<3 {
            async let first = target.sync(with: LedgerTransport(peer, label: "pull"), push: false)
            async let second = target.receive(peer.records(lacking: target.vector), from: "push")
            let (pulled, pushed) = try await (first, second)
            if round == 0 {
                #expect(pulled.pulled + pushed.applied == 2_000, "each event applied once, by whichever came first")
                #expect(pulled.alreadyHeld + pushed.alreadyHeld == 2_000, "the other counted them as held")
            } else {
                #expect(pulled.pulled + pushed.applied == 0)
            }
        }
        #expect(target.vector == peer.vector)
        #expect(try target.views.expenses(ExpenseQuery([("limit", "1000")])).rows.count == 1_000, "the views show what was applied")
    }
}
