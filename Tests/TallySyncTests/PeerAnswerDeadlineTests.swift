import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
@testable import TallySync

/// A peer's answer is read to the request's deadline, not only to its head (found by a hostile
/// peer: AsyncHTTPClient's deadline ends when the head arrives, and a body that dripped a byte
/// a second held a sync — and, in a server, every delivery behind it — as long as it liked).
@Suite struct PeerAnswerDeadlineTests {
    /// An answer whose body comes in `pieces`, one every `interval`.
    func answer(_ pieces: Int, every interval: Duration) -> HTTPClientResponse {
        let body = AsyncStream<ByteBuffer> { continuation in
            let feeding = Task {
                for _ in 0..<pieces {
                    continuation.yield(ByteBuffer(string: "x"))
                    try? await Task.sleep(for: interval)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in feeding.cancel() }
        }
        return HTTPClientResponse(status: .ok, body: .stream(body))
    }

    @Test func anAnswerThatEndsInTimeIsReadWhole() async throws {
        let body = try await ReplicaClient.body(of: answer(5, every: .milliseconds(10)), upTo: 100, by: .now() + .seconds(600), "peer: GET /x")
        #expect(body.readableBytes == 5)
    }

    @Test func aDrippingAnswerIsGivenUpAtTheDeadline() async throws {
        await #expect {
            _ = try await ReplicaClient.body(of: answer(1_000, every: .milliseconds(20)), upTo: 1 << 20, by: .now() + .milliseconds(300), "peer: GET /x")
        } throws: { "\($0)".contains("did not end in time") }
        var pieces = 0
        await #expect {
            for try await _ in try ReplicaClient.pieces(of: answer(1_000, every: .milliseconds(20)), by: .now() + .milliseconds(300), "peer: POST /pull") {
                pieces += 1
            }
        } throws: { "\($0)".contains("did not end in time") }
        #expect(pieces < 1_000, "given up at the deadline, not when the peer chose to end")
    }

    @Test func anAnswerLongerThanItsLimitIsRefused() async throws {
        await #expect {
            _ = try await ReplicaClient.body(of: answer(20, every: .zero), upTo: 10, by: .now() + .seconds(600), "peer: GET /x")
        } throws: { "\($0)".contains("longer than 10 bytes") }
    }

    /// A peer's failures are told in words, and only those: this replica's own (a disk it cannot
    /// write) are not blamed on the peer (found by the review of today's mends).
    @Test func onlyTheExchangesFailuresAreToldAsThePeers() {
        #expect(ReplicaClient.failureInWords(HTTPClientError.readTimeout)?.contains("stopped answering") == true)
        #expect(ReplicaClient.failureInWords(NIOTooManyBytesError(maxBytes: 1 << 20)) != nil)
        #expect(ReplicaClient.failureInWords(CocoaError(.fileWriteNoPermission)) == nil)
    }
}
