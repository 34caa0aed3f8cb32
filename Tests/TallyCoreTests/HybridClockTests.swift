import Testing
import TallyCore

@Suite struct HybridClockTests {
    @Test func readingsNeverGoBackwards() {
        var clock = HybridClock()
        let a = clock.tick(wallMillis: 1_000)
        let b = clock.tick(wallMillis: 1_000)
        let c = clock.tick(wallMillis: 900)  // wall clock stepped back
        let d = clock.tick(wallMillis: 2_000)
        #expect(a < b && b < c && c < d)
        #expect(c.millis == 1_000 && c.counter == 2)
        #expect(d == HybridTimestamp(millis: 2_000, counter: 0))
    }

    @Test func remoteReadingsPushTheClockForward() throws {
        var clock = HybridClock()
        try clock.observe(HybridTimestamp(millis: 5_000, counter: 7), wallMillis: 4_000)
        #expect(clock.tick(wallMillis: 4_500) == HybridTimestamp(millis: 5_000, counter: 8))
    }

    @Test func aRemoteReadingTooFarAheadIsRefusedAndNotAdopted() {
        var clock = HybridClock(maximumSkewMillis: 60_000)
        _ = clock.tick(wallMillis: 1_000)
        #expect(throws: ClockSkewError.self) { try clock.observe(HybridTimestamp(millis: 61_001, counter: 0), wallMillis: 1_000) }
        #expect(clock.last == HybridTimestamp(millis: 1_000, counter: 0))
    }

    @Test func writeStampsBreakTiesByOrigin() {
        let low = ReplicaID(string: "00000000-0000-0000-0000-000000000001")!
        let high = ReplicaID(string: "ff000000-0000-0000-0000-000000000000")!
        let time = HybridTimestamp(millis: 1, counter: 0)
        #expect(WriteStamp(timestamp: time, origin: low) < WriteStamp(timestamp: time, origin: high))
        #expect(WriteStamp(timestamp: HybridTimestamp(millis: 2, counter: 0), origin: low) > WriteStamp(timestamp: time, origin: high))
    }
}
