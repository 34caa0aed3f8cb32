import AsyncHTTPClient
import Foundation
import Testing
import TallyTestSupport

/// A full disk under the views or under the log, on real small file systems (tmpfs mounts the
/// test makes; they need root, which CI has): a durable write is never answered 5xx, `/health`
/// says what is wrong, and after space returns nothing acknowledged is lost or duplicated.
@Suite(.serialized) struct DiskFullTests {
    static let canMount: Bool = {
        let probe = NSTemporaryDirectory() + "/tally-mount-probe-\(getpid())"
        try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard mount(probe, bytes: 1 << 20) else { return false }
        unmount(probe)
        return true
    }()

    @discardableResult
    static func mount(_ path: String, bytes: Int) -> Bool {
        (try? TallyBinary.command("/bin/mount", ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", path]).status) == 0
    }

    static func unmount(_ path: String) { _ = try? TallyBinary.command("/bin/umount", ["-l", path]) }

    /// Fills the file system holding `path` with a file `junk`; returns its path.
    static func fill(_ folder: String) -> String {
        let junk = folder + "/junk"
        let fd = open(junk, O_WRONLY | O_CREAT, 0o600)
        let block = [UInt8](repeating: 7, count: 64 << 10)
        while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        var small = [UInt8](repeating: 7, count: 512)
        while small.withUnsafeMutableBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        close(fd)
        return junk
    }

    /// Text that does not compress (the log's LZ4 would make a repeated letter nearly free).
    static func noise(_ seed: UInt64, count: Int = 3_000) -> String {
        var rng = SplitMix64(seed: seed)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<count).map { _ in alphabet.randomElement(using: &rng)! })
    }

    static func ids(_ server: LiveServer, _ token: String) async throws -> [String] {
        let (status, body) = try await server.request(.GET, "/v1/expenses?limit=1000", token: token)
        #expect(status == 200)
        let items = (try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["items"] as? [[String: Any]] ?? []
        return items.compactMap { $0["id"] as? String }
    }

    @Test(.enabled(if: canMount, "needs permission to mount a tmpfs")) func aFullDiskUnderTheViewsNeverAnswers5xxForADurableWrite() async throws {
        var mounts: [String] = []
        defer { for path in mounts.reversed() { Self.unmount(path) } }
        let replica = try CLIReplica { path in
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            #expect(Self.mount(path, bytes: 2 << 20)); mounts.append(path)  // the views' disk: small
            try FileManager.default.createDirectory(atPath: path + "/log", withIntermediateDirectories: true)
            #expect(Self.mount(path + "/log", bytes: 64 << 20)); mounts.append(path + "/log")  // the log's: roomy
        }
        let token = try replica.ok(["token", "create", "--name", "app", "--scope", "read,write"])
        let server = try LiveServer(replica)
        defer { server.kill(SIGTERM) }
        for amount in 1...3 { _ = try await server.request(.POST, "/v1/expenses", token: token, json: #"{"amount": \#(amount)}"#) }
        let junk = Self.fill(replica.path)
        var acknowledged: [String] = []
        var behind = 0
        for amount in 10..<60 {
            let (status, body) = try await server.request(
                .POST, "/v1/expenses", token: token, json: #"{"amount": \#(amount), "memo": "\#(Self.noise(UInt64(amount)))"}"#)
            #expect(status < 500, "a durable write is never a 5xx: \(status) \(body)")
            if status == 202 { behind += 1 }
            if (200..<300).contains(status), let id = (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["id"] as? String {
                acknowledged.append(id)
            }
        }
        #expect(!acknowledged.isEmpty)
        #expect(behind > 0, "the full disk under the views was felt: some writes were answered 202, written with the views behind")
        try FileManager.default.removeItem(atPath: junk)
        let (status, _) = try await server.request(.POST, "/v1/expenses", token: token, json: #"{"amount": 99}"#)
        #expect(status == 201, "space returned: writes project again")
        let listed = try await Self.ids(server, token)
        for id in acknowledged { #expect(listed.filter { $0 == id }.count == 1, "acknowledged \(id) shows once") }
        #expect(listed.count == 3 + acknowledged.count + 1, "nothing lost, nothing duplicated")
    }

    @Test(.enabled(if: canMount, "needs permission to mount a tmpfs")) func aFullDiskUnderTheLogStopsWritesAndHealthSaysSo() async throws {
        var mounts: [String] = []
        defer { for path in mounts.reversed() { Self.unmount(path) } }
        let replica = try CLIReplica { path in
            try FileManager.default.createDirectory(atPath: path + "/log", withIntermediateDirectories: true)
            #expect(Self.mount(path + "/log", bytes: 2 << 20)); mounts.append(path + "/log")
        }
        let token = try replica.ok(["token", "create", "--name", "app", "--scope", "read,write"])
        var server = try LiveServer(replica)
        var acknowledged: [String] = []
        let junk = Self.fill(replica.path + "/log")
        var sawRefusal = false
        for amount in 1...40 {
            let (status, body) = try await server.request(
                .POST, "/v1/expenses", token: token, json: #"{"amount": \#(amount), "memo": "\#(Self.noise(UInt64(amount)))"}"#)
            if status == 201, let id = (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["id"] as? String {
                acknowledged.append(id)
            }
            if status == 503 { sawRefusal = true }
            #expect(status == 201 || status == 503, "\(status) \(body)")
        }
        #expect(sawRefusal, "the full log disk stopped the writer")
        let (health, reason) = try await server.request(.GET, "/health", token: token)
        #expect(health == 503 && reason.contains("writer stopped"), "\(health) \(reason)")
        try FileManager.default.removeItem(atPath: junk)
        // A stopped writer stays stopped (it acknowledged nothing after the failure); a restart recovers.
        server.kill(SIGTERM)
        server = try LiveServer(replica)
        defer { server.kill(SIGTERM) }
        let (after, _) = try await server.request(.POST, "/v1/expenses", token: token, json: #"{"amount": 5}"#)
        #expect(after == 201)
        #expect(try await server.request(.GET, "/health", token: token).status == 200)
        let listed = try await Self.ids(server, token)
        for id in acknowledged { #expect(listed.contains(id), "acknowledged \(id) survived") }
        #expect(Set(listed).count == listed.count)
    }
}
