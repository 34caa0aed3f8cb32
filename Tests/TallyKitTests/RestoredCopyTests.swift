import Foundation
import Testing
import TallyCore
import TallyKit
import TallyLog
import TallyTestSupport

/// A restored or copied folder found at open, and splits a crash interrupted.
@Suite struct RestoredCopyTests {
    @Test func aCopiedFolderTakesANewIdentityOnceAndKeepsTheHistory() async throws {
        let folder = TemporaryDirectory("kit")
        let original = try await Replica.open(at: folder.file("a"), actor: "minji")
        let lunch = try await original.create(ExpenseFields(amount: 9_000, memo: "lunch"))
        await original.releaseWriter()
        try FileManager.default.copyItem(atPath: folder.file("a"), toPath: folder.file("b"))

        // The app and its widget open the restored folder at once: one identity change.
        async let app = Replica.open(at: folder.file("b"), actor: "minji")
        async let widget = Replica.open(at: folder.file("b"), actor: "minji")
        let (copy, other) = try await (app, widget)
        #expect(try copy.replicaID == other.replicaID)
        #expect(try copy.replicaID != original.replicaID)
        let changes = try copy.identityChanges()
        #expect(try changes.count == 1 && changes.first?.formerOrigin == original.replicaID)
        #expect(changes.first?.description.contains("copy of another device's ledger") == true)

        // What it held is still there, by its former origin; its writes are its own now.
        #expect(try copy.query.expense(id: lunch)?.memo == "lunch")
        try await copy.update(lunch, ExpenseFields(memo: "lunch with Jisoo"))
        #expect(try copy.query.history(of: lunch).map { $0.event.origin.description } == [try original.replicaID, try copy.replicaID])
        #expect(try await Replica.open(at: folder.file("b"), actor: "minji").identityChanges().count == 1, "opening it again changes nothing")
        #expect(try await Replica.open(at: folder.file("a"), actor: "minji").replicaID == original.replicaID)
    }

    @Test func aSplitACrashInterruptedIsFinishedOrUndoneAtOpen() async throws {
        let folder = TemporaryDirectory("kit")
        let path = folder.file("ledger")
        let replica = try await Replica.open(at: path, actor: "minji")
        try await replica.create(ExpenseFields(amount: 1_000))
        await replica.releaseWriter()
        let before = try replica.replicaID

        // Not complete: removed, the replica untouched.
        _ = try DataDirectory.create(path: path + ".split", name: "half")
        #expect(try await Replica.open(at: path, actor: "minji").replicaID == before)
        #expect(!FileManager.default.fileExists(atPath: path + ".split"))

        // Complete, the old folder not yet moved aside: put in place, the old one kept beside.
        let whole = try DataDirectory.create(path: path + ".split", name: "whole")
        try whole.openWriter().close()
        try ReplicaHome.record(whole)
        FileManager.default.createFile(atPath: path + ".split/split-complete", contents: Data())
        let reopened = try await Replica.open(at: path, actor: "minji")
        #expect(try reopened.replicaID == whole.identity.replicaId)
        #expect(try reopened.identityChanges().isEmpty, "a split records its change before it is complete")
        #expect(!FileManager.default.fileExists(atPath: path + "/split-complete"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).contains { $0.hasPrefix("ledger.replaced-") })
    }
}
