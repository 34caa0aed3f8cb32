import Foundation
import Testing
@testable import TallyCluster

/// The operator's edits of a ledger's files queued in PostgreSQL (`ClusterArchive+Edits`):
/// answered by the lease holder with its store of the files, or applied to PostgreSQL's copy
/// while no node serves the ledger. Each test uses a ledger of its own.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TALLY_TEST_POSTGRES (scripts/test starts a PostgreSQL)"))
struct ClusterEditTests {
    let ledger = "e-" + UUID().uuidString.lowercased()

    /// An "edit" of the tests: the bytes are appended to `tokens.json`; "refuse" is refused.
    static func apply(_ edit: [UInt8], _ files: [String: [UInt8]]) -> (files: [String: [UInt8]], refusal: String?) {
        if edit == Array("refuse".utf8) { return (files, "refused") }
        var files = files
        files["tokens.json", default: []] += edit
        return (files, nil)
    }

    @Test func anEditOfALedgerNobodyServesIsAppliedToTheFilesPostgreSQLHolds() async throws {
        try await TestPostgres.withNodes(["a"]) { nodes in
            let cli = nodes[0]
            try await cli.register(ledger, files: ["tokens.json": Array("[".utf8)])
            let made = try await cli.queueEdit(Array("x".utf8), of: ledger)
            #expect(try await cli.answer(ofEdit: made) == nil, "queued, not answered")
            #expect(try await cli.applyWhileUnserved(made, of: ledger, Self.apply) == EditAnswer(id: made, refusal: nil))
            #expect(try await cli.files(of: ledger)?["tokens.json"] == Array("[x".utf8))
            #expect(try await cli.answer(ofEdit: made) == EditAnswer(id: made, refusal: nil))
            #expect(try await cli.pendingEdits(of: ledger).isEmpty)
            // Answered once: applying it again changes nothing.
            #expect(try await cli.applyWhileUnserved(made, of: ledger, Self.apply) == EditAnswer(id: made, refusal: nil))
            #expect(try await cli.files(of: ledger)?["tokens.json"] == Array("[x".utf8))
            // A refused edit changes no file and says why.
            let refused = try await cli.queueEdit(Array("refuse".utf8), of: ledger)
            #expect(try await cli.applyWhileUnserved(refused, of: ledger, Self.apply) == EditAnswer(id: refused, refusal: "refused"))
            #expect(try await cli.files(of: ledger)?["tokens.json"] == Array("[x".utf8))
        }
    }

    @Test func anEditOfAServedLedgerWaitsForItsOwnerWhoAnswersItWithItsFiles() async throws {
        try await TestPostgres.withNodes(["a", "cli"]) { nodes in
            let (owner, cli) = (nodes[0], nodes[1])
            try await cli.register(ledger, files: ["tokens.json": Array("[".utf8)])
            let lease = try await owner.takeLease(ledger, localEnd: nil, for: .seconds(30))
            #expect(try await owner.renew(lease, for: .seconds(30)) == false, "no edit waits")
            let made = try await cli.queueEdit(Array("y".utf8), of: ledger)
            #expect(try await owner.renew(lease, for: .seconds(30)) == true, "the renewal says an edit waits")
            #expect(try await cli.waitingEdits()[ledger] == 1)
            #expect(try await cli.applyWhileUnserved(made, of: ledger, Self.apply) == nil, "the owner's to apply")
            #expect(try await cli.files(of: ledger)?["tokens.json"] == Array("[".utf8))
            let pending = try await owner.pendingEdits(of: ledger)
            #expect(pending.map(\.id) == [made] && pending.first?.edit == Array("y".utf8))
            try await owner.store(["tokens.json": Array("[y".utf8)], answering: [EditAnswer(id: made, refusal: nil)], of: lease)
            #expect(try await cli.answer(ofEdit: made) == EditAnswer(id: made, refusal: nil))
            #expect(try await cli.files(of: ledger)?["tokens.json"] == Array("[y".utf8))
            #expect(try await owner.pendingEdits(of: ledger).isEmpty)
            #expect(try await owner.renew(lease, for: .seconds(30)) == false)
            #expect(try await cli.waitingEdits()[ledger] == nil)
            // A former owner's answer is refused with its files (the epoch fences both).
            let late = try await cli.queueEdit(Array("z".utf8), of: ledger)
            try await owner.release(lease)
            await #expect(throws: ClusterRefusal.self) {
                try await owner.store(["tokens.json": Array("[yz".utf8)], answering: [EditAnswer(id: late, refusal: nil)], of: lease)
            }
            #expect(try await cli.answer(ofEdit: late) == nil)
        }
    }

    @Test func anEditMadeWhileALeaseRanOutUntakenFencesItsFormerOwner() async throws {
        try await TestPostgres.withNodes(["a", "cli"]) { nodes in
            let (owner, cli) = (nodes[0], nodes[1])
            try await cli.register(ledger, files: ["tokens.json": Array("[".utf8)])
            let lease = try await owner.takeLease(ledger, localEnd: nil, for: .milliseconds(300))
            try await Task.sleep(for: .milliseconds(500))  // paused past its lease; nobody took it
            let made = try await cli.queueEdit(Array("r".utf8), of: ledger)
            #expect(try await cli.applyWhileUnserved(made, of: ledger, Self.apply) == EditAnswer(id: made, refusal: nil))
            // Its copy of the files predates the edit: it may neither renew nor store over it.
            await #expect(throws: ClusterRefusal.fenced(ledger: ledger, epoch: lease.epoch)) { try await owner.renew(lease, for: .seconds(30)) }
            await #expect(throws: ClusterRefusal.self) { try await owner.store(["tokens.json": Array("[old".utf8)], of: lease) }
            #expect(try await cli.files(of: ledger)?["tokens.json"] == Array("[r".utf8))
            let next = try await owner.takeLease(ledger, localEnd: nil, for: .seconds(30))
            #expect(next.epoch > lease.epoch + 1)
        }
    }

    @Test func anEditOfMoreThanItsLimitIsRefusedBeforeItIsQueued() async throws {
        try await TestPostgres.withNodes(["cli"]) { nodes in
            try await nodes[0].register(ledger, files: [:])
            await #expect(throws: ClusterRefusal.self) {
                _ = try await nodes[0].queueEdit([UInt8](repeating: 0x20, count: ClusterArchive.maxEditBytes + 1), of: ledger)
            }
            #expect(try await nodes[0].pendingEdits(of: ledger).isEmpty)
        }
    }

    @Test func anEditOfALedgerTheClusterDoesNotHoldIsRefused() async throws {
        try await TestPostgres.withNodes(["cli"]) { nodes in
            await #expect(throws: ClusterRefusal.invalid("no ledger named '\(ledger)' in the cluster")) {
                _ = try await nodes[0].queueEdit(Array("x".utf8), of: ledger)
            }
        }
    }
}
