import Foundation
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
