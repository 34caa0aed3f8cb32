import Foundation
import Testing
import TallyCore
import TallyKit
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

    @Test func theStatusSaysWhatAPersonNeedsToKnow() async throws {
        let serverReplica = try CLIReplica()
        let token = try serverReplica.ok(["token", "create", "--name", "phone", "--scope", "replicate"])
        let server = try LiveServer(serverReplica)
        let folder = TemporaryDirectory("kit-status")
        let phone = try await Replica.open(at: folder.file("phone"), actor: "minji")
        let home = SyncServer(url: server.url, token: token)

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
