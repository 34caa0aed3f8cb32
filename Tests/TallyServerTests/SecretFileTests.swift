import Foundation
import Testing
import TallyLog
import TallyServer
import TallySync
import TallyTestSupport

/// Secrets in the data directory: owner-only from the first byte, changed under a lock, and a
/// change of the token file noticed at once.
@Suite struct SecretFileTests {
    static func mode(_ path: String) -> mode_t {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o777 : 0
    }

    @Test func secretsAreOwnerOnlyAndSoIsTheDataDirectory() throws {
        let folder = TemporaryDirectory("tally-secrets")
        let directory = try DataDirectory.create(path: folder.file("data"), name: "a")
        #expect(Self.mode(directory.path) == 0o700)
        // A stale temporary file left world-readable by a crash must not lend its mode.
        _ = FileManager.default.createFile(atPath: directory.path + "/tokens.json.tmp", contents: Data("x".utf8), attributes: [.posixPermissions: 0o644])
        _ = try TokenStore(directory: directory).create(name: "app", scopes: [.read])
        try PeerStore(directory: directory).add(Peer(name: "b", url: "http://127.0.0.1:9", token: "tly_x"))
        #expect(Self.mode(directory.path + "/tokens.json") == 0o600)
        #expect(Self.mode(directory.path + "/peers.json") == 0o600)
        // An older data directory is narrowed when opened.
        chmod(directory.path, 0o755)
        _ = try DataDirectory(path: directory.path)
        #expect(Self.mode(directory.path) == 0o700)
    }

    @Test func concurrentCreatesLoseNoToken() async throws {
        let folder = TemporaryDirectory("tally-secrets")
        let directory = try DataDirectory.create(path: folder.file("data"), name: "a")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<16 {
                group.addTask { _ = try TokenStore(directory: directory).create(name: "t\(index)", scopes: [.read]) }
            }
            try await group.waitForAll()
        }
        #expect(try TokenStore(directory: directory).all().count == 16, "each read-modify-write held the lock")
    }

    @Test func aRevocationIsNoticedAtOnceByAnotherStore() throws {
        let folder = TemporaryDirectory("tally-secrets")
        let directory = try DataDirectory.create(path: folder.file("data"), name: "a")
        let serving = TokenStore(directory: directory)
        let secret = try TokenStore(directory: directory).create(name: "phone", scopes: [.read])
        #expect(try serving.authenticate(secret)?.name == "phone")
        for round in 0..<20 {  // within the same clock tick, many times
            #expect(try TokenStore(directory: directory).revoke(name: "phone"))
            #expect(try serving.authenticate(secret) == nil, "round \(round): revoked")
            _ = try TokenStore(directory: directory).create(name: "phone", scopes: [.read])
        }
    }
}
