import Foundation
import Testing
import TallyCore
import NIOCore
import TallyLedger
import TallySync
@testable import TallyKit
import TallyTestSupport

/// What an app shows about its sync, as a person would see it: "up to date", "3 changes
/// waiting", "offline since 10:42", "needs sign-in" — and a sync that retries until the
/// server is back.
@Suite struct KitSyncStatusTests {
    /// A port nothing listens on (taken from the OS, then let go).
    static func freePort() -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A served replica with a replicate token, and a phone's replica in a folder of its own.
    struct PhoneAndServer {
        let serverReplica: CLIReplica
        let token: String
        let server: LiveServer
        let folder = TemporaryDirectory("kit-status")
        let phone: Replica
        var home: SyncServer { SyncServer(url: server.url, token: token) }

        init() async throws {
            serverReplica = try CLIReplica()
            token = try serverReplica.ok(["token", "create", "--name", "phone", "--scope", "replicate"])
            server = try LiveServer(serverReplica)
            phone = try await Replica.open(at: folder.file("phone"), actor: "minji")
        }
    }

    @Test func theStatusSaysWhatAPersonNeedsToKnow() async throws {
        let setup = try await PhoneAndServer()
        let (server, phone, home, token) = (setup.server, setup.phone, setup.home, setup.token)

        for amount in [1_000, 2_000, 3_000] as [Int64] { try await phone.create(ExpenseFields(amount: amount)) }
        #expect(try phone.syncStatus(with: home) == .changesWaiting(3))
        #expect(try phone.syncStatus(with: home).description == "3 changes waiting")
        try await phone.sync(with: home)
        #expect(try phone.syncStatus(with: home) == .upToDate)
        #expect(try phone.syncStatus(with: home).description == "up to date")

        // The server gone: retried, then offline since the first failure, the change kept.
        try await phone.create(ExpenseFields(amount: 4_000))
        let gone = SyncServer(url: "http://127.0.0.1:\(Self.freePort())", token: token)
        _ = try? await phone.sync(with: home)  // so the unreachable server has a last sync too
        await #expect(throws: (any Error).self) { try await phone.sync(with: gone, retry: RetryPolicy(attempts: 3, first: .milliseconds(10))) }
        guard case .offline(let since, let waiting) = try phone.syncStatus(with: gone) else {
            Issue.record("not offline: \(try phone.syncStatus(with: gone))")
            return
        }
        #expect(waiting == 4 && Date().timeIntervalSince(since) < 60)
        #expect(try phone.syncStatus(with: gone).description.hasPrefix("offline since "))

        // Credentials refused: no retry, "needs sign-in" until a sync with good ones.
        let revoked = SyncServer(url: server.url, token: "tally_not-a-token")
        let started = ContinuousClock.now
        await #expect(throws: (any Error).self) { try await phone.sync(with: revoked, retry: RetryPolicy(attempts: 5, first: .seconds(2))) }
        #expect(ContinuousClock.now - started < .seconds(2), "a refused credential is not retried")
        #expect(try phone.syncStatus(with: revoked) == .needsSignIn)
        #expect(try phone.syncStatus(with: revoked).description == "needs sign-in")
    }

    /// The server's transport, with a write of the phone's made while a push is under way,
    /// after what it sends was read: the write misses that push.
    struct WritingDuringThePush: ReplicaTransport {
        let server: ReplicaClient
        let phone: Replica
        var label: String { server.label }
        func vector() async throws -> VersionVector { try await server.vector() }
        func fetch(lacking mine: VersionVector, into receive: (ByteBuffer) throws -> Void) async throws { try await server.fetch(lacking: mine, into: receive) }
        func send(_ records: AsyncThrowingStream<ByteBuffer, any Error>) async throws -> SendReport {
            var read: [ByteBuffer] = []
            for try await piece in records { read.append(piece) }
            try await phone.create(ExpenseFields(amount: 9_000, memo: "made during the sync"))
            let (stream, continuation) = AsyncThrowingStream.makeStream(of: ByteBuffer.self)
            for piece in read { continuation.yield(piece) }
            continuation.finish()
            return try await server.send(stream)
        }
        func fetchBlob(_ digest: String, into receive: (ByteBuffer) throws -> Void) async throws -> Bool { try await server.fetchBlob(digest, into: receive) }
        func missingBlobs(_ offered: [String]) async throws -> [String] { try await server.missingBlobs(offered) }
        func sendBlob(_ digest: String, bytes: ByteBuffer) async throws { try await server.sendBlob(digest, bytes: bytes) }
    }

    /// Found by review: the status took everything the replica held at the end of a sync as
    /// sent, so a change made while the sync ran showed "up to date" though it had missed the push.
    @Test func aChangeMadeDuringASyncIsStillWaitingAfterIt() async throws {
        let setup = try await PhoneAndServer()
        let (serverReplica, phone, home) = (setup.serverReplica, setup.phone, setup.home)
        try await phone.create(ExpenseFields(amount: 1_000))
        let report = try await phone.sync(with: home, retry: RetryPolicy(attempts: 1), attachments: .whenAsked) {
            WritingDuringThePush(server: $0, phone: phone)
        }
        #expect(report.pushed == 1, "the first change went; the one made meanwhile did not")
        #expect(try phone.syncStatus(with: home) == .changesWaiting(1))
        try await phone.sync(with: home)
        #expect(try phone.syncStatus(with: home) == .upToDate)
        #expect(try serverReplica.ok(["expenses", "list", "--json"]).contains("made during the sync"))
    }

    /// Found by review: a server holding another chain of some other replica's origin (a
    /// restored copy of that replica wrote apart) was refused, but the refusal was not
    /// remembered, so the status went on saying what it said before.
    @Test func aServerWithAForkedChainOfAnotherReplicaIsShownAsRefused() async throws {
        let original = try CLIReplica()
        let token = try original.ok(["token", "create", "--name", "phone", "--scope", "replicate"])
        let copy = CLIReplica(existing: original.directory.file("copy"))
        try FileManager.default.copyItem(atPath: original.path, toPath: copy.path)
        _ = try original.ok(["expense", "add", "--amount", "1000"])
        for amount in ["2000", "3000"] { _ = try copy.ok(["expense", "add", "--amount", amount]) }
        let (originalServer, copyServer) = (try LiveServer(original), try LiveServer(copy))
        let folder = TemporaryDirectory("kit-status")
        let phone = try await Replica.open(at: folder.file("phone"), actor: "minji")
        let home = SyncServer(url: originalServer.url, token: token)
        try await phone.sync(with: home)
        let forked = SyncServer(url: copyServer.url, token: token)
        await #expect(throws: SyncRejection.self) { try await phone.sync(with: forked, retry: RetryPolicy(attempts: 1)) }
        guard case .refused(let reason) = try phone.syncStatus(with: forked) else {
            Issue.record("not refused: \(try phone.syncStatus(with: forked))")
            return
        }
        #expect(reason.contains("fork"), "\(reason)")
        #expect(try phone.syncStatus(with: home) == .upToDate, "the first server's status is its own")
    }

    @Test func aSyncRetriesUntilTheServerIsBack() async throws {
        let serverReplica = try CLIReplica()
        let token = try serverReplica.ok(["token", "create", "--name", "phone", "--scope", "replicate"])
        let port = Self.freePort()
        let folder = TemporaryDirectory("kit-status")
        let phone = try await Replica.open(at: folder.file("phone"), actor: "minji")
        try await phone.create(ExpenseFields(amount: 1_000))
        let home = SyncServer(url: "http://127.0.0.1:\(port)", token: token)
        let syncing = Task { try await phone.sync(with: home, retry: RetryPolicy(attempts: 12, first: .milliseconds(100), longest: .milliseconds(500))) }
        try await Task.sleep(for: .milliseconds(300))
        let server = try LiveServer(serverReplica, options: ["--port", "\(port)"])
        let report = try await syncing.value
        #expect(report.pushed == 1 && server.port == port)
        #expect(try phone.syncStatus(with: home) == .upToDate)
    }
}

/// Attachments an app fetches when it wants them: a sync brings the expenses, not the photos;
/// the list shows the server's thumbnail first (kept on the device), the photo itself when
/// opened.
@Suite struct KitAttachmentTests {
    @Test func aSyncLeavesPhotosOnTheServerUntilAskedThumbnailFirst() async throws {
        let serverReplica = try CLIReplica()
        let token = try serverReplica.ok(["token", "create", "--name", "phones", "--scope", "read,replicate"])
        let server = try LiveServer(serverReplica)
        let home = SyncServer(url: server.url, token: token)
        let folder = TemporaryDirectory("kit-photos")
        let phone = try await Replica.open(at: folder.file("phone"), actor: "minji")
        let photo = PNGFixture.zeros(width: 640, height: 480, bitDepth: 8, interlaced: false)
        let digest = try await phone.addAttachment(photo)
        try await phone.create(ExpenseFields(amount: 9_000, memo: "receipt", attachments: [digest]))
        #expect(try await phone.sync(with: home).blobsSent == 1)

        let laptop = try await Replica.open(at: folder.file("laptop"), actor: "minji")
        let report = try await laptop.sync(with: home)
        #expect(report.pulled >= 1 && report.blobsFetched == 0, "the photo stays on the server")
        #expect(try laptop.query.expenses().first?.attachments == [digest])
        #expect(try laptop.attachment(digest) == nil)
        let thumbnail = try #require(try await laptop.thumbnail(digest, size: 128, from: home))
        #expect(AttachmentType.sniff(thumbnail.prefix(32))?.hasPrefix("image/") == true && thumbnail.count < photo.count)
        #expect(try await laptop.attachment(digest, from: home) == photo, "the photo itself, when opened")
        #expect(try laptop.attachment(digest) == photo, "and kept")
        server.kill(SIGTERM)
        #expect(try await laptop.thumbnail(digest, size: 128, from: home) == thumbnail, "the thumbnail is kept on the device")
        await #expect(throws: ValidationError.self) { try await laptop.thumbnail("../etc", from: home) }
        await #expect(throws: ValidationError.self) { try await laptop.thumbnail(digest, size: 999, from: home) }
    }
}
