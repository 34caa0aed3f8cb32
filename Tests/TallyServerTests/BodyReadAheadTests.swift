import Hummingbird
import NIOCore
import Testing
@testable import TallyServer

/// `BodyReadAhead`: a push's first bytes read before it takes the ledger's turn, and the rest
/// made to keep coming while it holds it.
struct BodyReadAheadTests {
    /// A body that sends `pieces`, each after its delay.
    func body(_ pieces: [(after: Duration, bytes: Int)]) -> RequestBody {
        let (stream, source) = AsyncStream.makeStream(of: ByteBuffer.self)
        Task {
            for piece in pieces {
                try? await Task.sleep(for: piece.after)
                source.yield(ByteBuffer(repeating: 7, count: piece.bytes))
            }
            source.finish()
        }
        return RequestBody(asyncSequence: stream)
    }

    /// Reads the whole body through `BodyReadAhead`: the bytes read, and the failure that
    /// stopped it, if one did.
    func readAll(_ body: RequestBody, pace: BodyReadAhead.Pace) async -> (bytes: Int, failure: APIError?) {
        var total = 0
        do {
            let readAhead = try await BodyReadAhead.reading(body, upTo: 100, pace: pace)
            for try await piece in readAhead { total += piece.readableBytes }
            return (total, nil)
        } catch {
            return (total, error as? APIError)
        }
    }

    let pace = BodyReadAhead.Pace(minimumRate: 1_000, grace: .milliseconds(200))

    @Test func aBodyThatKeepsComingIsReadWhole() async throws {
        let pieces = [(Duration.zero, 150)] + (0..<5).map { _ in (Duration.milliseconds(100), 400) }
        let read = await readAll(body(pieces), pace: pace)
        #expect(read.bytes == 2_150 && read.failure == nil, "\(read)")
    }

    @Test func aBodyThatDripsOnceTheReadAheadIsUsedUpIsCutAfterTheGrace() async throws {
        // More than the read-ahead at once, then a byte every 150 ms for 6 s: 1,000 a second asked.
        let pieces = [(Duration.zero, 150)] + (0..<40).map { _ in (Duration.milliseconds(150), 1) }
        let read = await readAll(body(pieces), pace: pace)
        #expect(read.failure?.code == "body_too_slow" && read.failure?.status == .requestTimeout, "\(read)")
        #expect(read.bytes < 150 + 10, "cut soon after the grace, not at the body's end: \(read.bytes) bytes read")
    }

    @Test func aShortBodyReadAheadWholeIsNeverHurried() async throws {
        // Within the read-ahead: read before the turn, so it may take its time.
        let read = await readAll(body([(.zero, 10), (.milliseconds(400), 10)]), pace: pace)
        #expect(read.bytes == 20 && read.failure == nil, "\(read)")
    }
}
