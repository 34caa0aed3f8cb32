import Hummingbird
import NIOCore
import Testing
@testable import TallyServer

/// `BodyReadAhead`: a push's first bytes read before it takes the ledger's turn, and the rest
/// made to keep coming while it holds it.
struct BodyReadAheadTests {
    /// A body that sends `pieces`, each after its delay, then ends.
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

    /// Reads the whole body through `BodyReadAhead` (100 bytes read ahead): the bytes read,
    /// and the failure that stopped it, if one did.
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

    /// 500 bytes in each half second waited.
    let pace = BodyReadAhead.Pace(minimumRate: 1_000, window: .milliseconds(500))

    @Test func aBodyThatKeepsComingIsReadWhole() async throws {
        let pieces = [(Duration.zero, 150)] + (0..<5).map { _ in (Duration.milliseconds(100), 400) }
        let read = await readAll(body(pieces), pace: .init(minimumRate: 100, window: .seconds(1)))
        #expect(read.bytes == 2_150 && read.failure == nil, "\(read)")
    }

    @Test func aBodyThatDripsOnceTheReadAheadIsUsedUpIsCutAtTheWindowsEnd() async throws {
        // More than the read-ahead at once, then a byte every 150 ms for 6 s.
        let pieces = [(Duration.zero, 150)] + (0..<40).map { _ in (Duration.milliseconds(150), 1) }
        let read = await readAll(body(pieces), pace: pace)
        #expect(read.failure?.code == "body_too_slow" && read.failure?.status == .requestTimeout, "\(read)")
        #expect(read.bytes < 150 + 10, "cut at the first window's end, not at the body's: \(read.bytes) bytes read")
    }

    @Test func aBodyThatFallsSilentIsCutByTheTimer() async throws {
        // Nothing for 3 s after the read-ahead: cut at the window's end, before the rest comes.
        let read = await readAll(body([(.zero, 150), (.seconds(3), 1_000)]), pace: pace)
        #expect(read.failure?.code == "body_too_slow" && read.bytes == 150, "\(read)")
    }

    @Test func bytesSentEarlyBuyNoLaterSilence() async throws {
        let read = await readAll(body([(.zero, 150), (.zero, 5_000), (.seconds(3), 1)]), pace: pace)
        #expect(read.failure?.code == "body_too_slow" && read.bytes == 5_150, "\(read)")
    }

    @Test func aPieceLateForOneWindowIsStillReadInTheNext() async throws {
        // Enough in the first window, then a piece 0.6 s later: waited for across the window's
        // end, not lost (cancelled, the body's iterator would have ended the body there).
        let read = await readAll(body([(.zero, 150), (.zero, 600), (.milliseconds(600), 600), (.zero, 600)]), pace: pace)
        #expect(read.bytes == 1_950 && read.failure == nil, "\(read)")
    }

    @Test func aShortBodyReadAheadWholeIsNeverHurried() async throws {
        // Within the read-ahead: read before the turn, so it may take its time.
        let read = await readAll(body([(.zero, 10), (.milliseconds(700), 10)]), pace: pace)
        #expect(read.bytes == 20 && read.failure == nil, "\(read)")
    }
}
