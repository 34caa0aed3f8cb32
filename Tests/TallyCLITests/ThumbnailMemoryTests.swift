import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing
import TallyTestSupport

/// Issue 29, measured on a running `tally serve`: whatever photos are uploaded and however many
/// thumbnails are asked at once, every request is answered and the server's peak memory
/// (VmHWM in /proc/PID/status) stays under the bound docs/SECURITY.md states.
@Suite(.serialized) struct ThumbnailMemoryTests {
    /// Eight different 12,247² 16-bit RGBA Adam7 PNGs (the bomb: ~7 MB each, 1.2 GB of pixels
    /// each when decoded) thumbnailed at once with a read token: each is refused from its
    /// header with 422, and the server stays under the bound of its default limits.
    @Test func eightInterlacedBombsAtOnceAreRefusedWithinTheBound() async throws {
        let replica = try CLIReplica()
        let writer = try replica.ok(["token", "create", "--name", "phone", "--scope", "read,write"])
        let reader = try replica.ok(["token", "create", "--name", "viewer", "--scope", "read"])
        let server = try LiveServer(replica)
        defer { server.kill(SIGTERM) }
        let bomb = PNGFixture.zeros(width: 12_247, height: 12_247, bitDepth: 16, interlaced: true)
        var digests: [String] = []
        for index in 0..<8 {
            var variant = bomb
            variant.append(UInt8(index))
            digests.append(try await upload(variant, to: server, token: writer))
        }
        #expect(Set(digests).count == 8)
        let answers = try await thumbnails(of: digests, from: server, token: reader)
        #expect(answers.allSatisfy { $0.status == 422 && $0.body.contains("image_too_large") && $0.body.contains("MiB") }, "\(answers)")
        let peak = try peakMemory(of: server)
        // The documented bound with the default limits (docs/SECURITY.md): 1,228 MiB.
        #expect(peak < 1_228 << 20, "peak RSS \(peak >> 20) MiB")
    }

    /// Eight different photos that each fit the decode limit (Adam7 PNGs of ~60 MiB of pixels
    /// under a 64 MiB limit, so each is decoded whole) asked at once: all are made, two at a
    /// time, so the peak grows by at most what docs/SECURITY.md allows two decodes — 1.5× the
    /// limit each (libpng's and libvips's working memory beside the pixels; measured 1.33×)
    /// and the photo's file — plus 32 MiB for eight requests; eight decodes at once grew ~660 MiB.
    @Test func decodesWithinTheLimitRunTwoAtATime() async throws {
        let replica = try CLIReplica()
        let writer = try replica.ok(["token", "create", "--name", "phone", "--scope", "read,write"])
        let server = try LiveServer(replica, options: ["--thumbnail-decode-mib", "64", "--thumbnail-decodes", "2"])
        defer { server.kill(SIGTERM) }
        let photo = PNGFixture.zeros(width: 2_790, height: 2_790, bitDepth: 16, interlaced: true)
        var digests: [String] = []
        for index in 0..<8 {
            var variant = photo
            variant.append(UInt8(index))
            digests.append(try await upload(variant, to: server, token: writer))
        }
        let resting = try residentMemory(of: server)
        let answers = try await thumbnails(of: digests, from: server, token: writer)
        #expect(answers.allSatisfy { $0.status == 200 }, "\(answers.map(\.status))")
        let growth = try peakMemory(of: server) - resting
        let bound = 2 * ((64 << 20) * 3 / 2 + photo.count) + (32 << 20)
        #expect(growth < bound, "grew \(growth >> 20) MiB, bound \(bound >> 20) MiB")
    }

    /// A 150-megapixel PNG read a strip at a time fits in memory but takes seconds of a core:
    /// it is stopped at `--thumbnail-timeout` and answered 422.
    @Test func aSlowDecodeIsStoppedAtItsTimeout() async throws {
        let replica = try CLIReplica()
        let writer = try replica.ok(["token", "create", "--name", "phone", "--scope", "read,write"])
        let server = try LiveServer(replica, options: ["--thumbnail-timeout", "1"])
        defer { server.kill(SIGTERM) }
        let digest = try await upload(PNGFixture.zeros(width: 12_247, height: 12_247, bitDepth: 16, interlaced: false), to: server, token: writer)
        let start = ContinuousClock.now
        let answer = try await server.request(.GET, "/v1/attachments/\(digest)/thumbnail?size=128", token: writer)
        #expect(answer.status == 422 && answer.body.contains("image_too_slow"), "\(answer)")
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    func upload(_ bytes: Data, to server: LiveServer, token: String) async throws -> String {
        var request = HTTPClientRequest(url: server.url + "/v1/attachments")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "image/png")
        request.body = .bytes(ByteBuffer(bytes: bytes))
        let response = try await LiveServer.client.execute(request, timeout: .seconds(120))
        let body = String(buffer: try await response.body.collect(upTo: 1 << 16))
        guard response.status == .created, let range = body.range(of: #""digest":"[0-9a-f]{64}""#, options: .regularExpression) else {
            throw CLIError("upload answered \(response.status): \(body)")
        }
        return String(body[range].dropFirst(10).dropLast())
    }

    func thumbnails(of digests: [String], from server: LiveServer, token: String) async throws -> [(status: Int, body: String)] {
        try await withThrowingTaskGroup(of: (status: Int, body: String).self) { group in
            for digest in digests {
                group.addTask { try await server.request(.GET, "/v1/attachments/\(digest)/thumbnail?size=128", token: token) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    func peakMemory(of server: LiveServer) throws -> Int { try memory("VmHWM", of: server) }
    func residentMemory(of server: LiveServer) throws -> Int { try memory("VmRSS", of: server) }

    /// A `kB` line of /proc/PID/status, in bytes.
    func memory(_ field: String, of server: LiveServer) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(server.process.processIdentifier)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { throw CLIError("no \(field) in /proc status") }
        return kilobytes << 10
    }
}
