import Foundation
import Testing
import TallyKit
import TallyLog
import TallyTestSupport

/// Restored copies (issue 33): a replica's folder copied — a phone restored from a backup on a
/// second phone — gives two live replicas one identity. Both copies write before and after
/// they meet, through a server and with each other, and every acknowledged write of both ends
/// up everywhere exactly once, with the change recorded and told in words.
@Suite struct KitCopyTests {
    /// Writes `count` expenses whose memos are `prefix-0`, `prefix-1`…; returns the memos.
    static func write(_ replica: Replica, _ prefix: String, _ count: Int) async throws -> [String] {
        var memos: [String] = []
        for number in 0..<count {
            try await replica.create(ExpenseFields(amount: Int64(1_000 + number), memo: .some("\(prefix)-\(number)")))
            memos.append("\(prefix)-\(number)")
        }
        return memos
    }

    static func memos(_ replica: Replica) throws -> [String] {
        var memos: [String] = []
        var cursor: String?
        repeat {
            let page = try replica.query.expensePage(limit: 1_000, after: cursor)
            memos += page.rows.map { $0.memo ?? "" }
            cursor = page.nextCursor
        } while cursor != nil
        return memos.sorted()
    }

    /// A copy made as a backup restore makes it: every file anew (new inodes).
    static func copy(_ from: String, to: String) throws { try FileManager.default.copyItem(atPath: from, toPath: to) }

    /// A copy that keeps looking like home — a VM snapshot started again, which keeps inodes —
    /// so that only a sync can tell.
    static func copyKeepingHome(_ from: String, to: String) throws {
        try copy(from, to: to)
        try ReplicaHome.record(try DataDirectory(path: to))
    }

    struct World {
        let serverReplica: CLIReplica
        let server: LiveServer
        let sync: SyncServer
        let devices = TemporaryDirectory("kit-copies")

        init() throws {
            serverReplica = try CLIReplica()
            let token = try serverReplica.ok(["token", "create", "--name", "phones", "--scope", "replicate"])
            server = try LiveServer(serverReplica)
            sync = SyncServer(url: server.url, token: token)
        }
    }

    /// Caught at open; caught at sync by the server refusing the copy's push (it wrote more
    /// than the original); caught at sync by the copy refusing the original's events it pulls
    /// (it wrote less); caught at sync by the copy's own last event echoed back different (it
    /// wrote as many).
    @Test(arguments: [(true, 7), (false, 7), (false, 3), (false, 5)])
    func bothCopiesWriteBeforeAndAfterTheyMeetAndEveryWriteEndsUpEverywhereOnce(caughtAtOpen: Bool, copyWrites: Int) async throws {
        let world = try World()
        let (pathA, pathB) = (world.devices.file("a"), world.devices.file("b"))
        let a = try await Replica.open(at: pathA, actor: "minji")
        var acked = try await Self.write(a, "before-copy", 4)
        try await a.sync(with: world.sync)
        await a.releaseWriter()
        let original = try a.replicaID

        if caughtAtOpen { try Self.copy(pathA, to: pathB) } else { try Self.copyKeepingHome(pathA, to: pathB) }
        let b = try await Replica.open(at: pathB, actor: "minji")
        #expect(try a.replicaID == original, "the original keeps its identity")
        #expect(try (b.replicaID != original) == caughtAtOpen, "a copy found at open takes a new identity before it writes")

        // Both write apart; the original syncs first. The copy wrote more (so its push forks
        // the server's chain) when it was not caught at open.
        acked += try await Self.write(a, "a-apart", 5)
        acked += try await Self.write(b, "b-apart", copyWrites)
        try await a.sync(with: world.sync)
        try await b.sync(with: world.sync)  // finds the fork (if not found at open) and splits off
        try await a.sync(with: world.sync)

        #expect(try b.replicaID != original)
        let change = try #require(try b.identityChanges().first { $0.newOrigin == (try? b.replicaID) })
        #expect(change.formerOrigin == original)
        #expect(change.detected.hasPrefix(caughtAtOpen ? "at open" : "at sync"))
        #expect(change.reissued == (caughtAtOpen ? 0 : copyWrites), "the copy's own changes the server never had are written again: \(change)")
        #expect(change.description.contains("copy of another device's ledger"))
        #expect(try a.identityChanges().contains(change), "the change is in the log everywhere")
        #expect(
            try b.query.history(of: try #require(try b.query.expenses(text: "b-apart-0").first.flatMap { UUID(uuidString: $0.id) })).last?.event.origin
                .description == (try b.replicaID))

        // After they met: both write again and sync, with the server and with each other (the
        // copy syncs with the original's folder served by `tally serve`).
        acked += try await Self.write(a, "a-after", 3)
        acked += try await Self.write(b, "b-after", 3)
        try await a.sync(with: world.sync)
        try await b.sync(with: world.sync)
        try await a.sync(with: world.sync)
        await a.releaseWriter()
        let aToken = try TallyBinary.run(["token", "create", "--name", "b", "--scope", "replicate", "--data-dir", pathA]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let servedA = try LiveServer(CLIReplica(existing: pathA))
        acked += try await Self.write(b, "b-direct", 2)
        try await b.sync(with: SyncServer(url: servedA.url, token: aToken))
        servedA.kill(SIGTERM)
        try await b.sync(with: world.sync)
        try await a.sync(with: world.sync)

        #expect(try Self.memos(a) == acked.sorted())
        #expect(try Self.memos(b) == acked.sorted())
        world.server.kill(SIGTERM)
        let onServer = try await Replica.open(at: world.serverReplica.path, actor: "checker")
        #expect(try Self.memos(onServer) == acked.sorted())
        if !caughtAtOpen {
            #expect(FileManager.default.fileExists(atPath: pathB), "the new replica took the copy's place")
            let aside = try FileManager.default.contentsOfDirectory(atPath: world.devices.path).filter { $0.hasPrefix("b.replaced-") }
            #expect(aside.count == 1, "the replaced folder is kept beside it")
        }
    }
}
