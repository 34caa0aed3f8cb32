import PropertyBased
import Testing
import TallyCore
import TallyTestSupport

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

    /// After a pushed stamp with a full counter, the next local write still wins.
    @Test func aFullCounterCarriesIntoTheMilliseconds() throws {
        var clock = HybridClock()
        let pushed = HybridTimestamp(millis: 200_000, counter: .max)
        try clock.observe(pushed, wallMillis: 100_000)
        let next = clock.tick(wallMillis: 100_001)
        #expect(next > pushed && next == HybridTimestamp(millis: 200_001, counter: 0))
    }

    /// Whatever the wall clock does and whatever is observed, each tick is greater than every
    /// stamp the clock handed out or accepted before it.
    @Test func everyTickExceedsEverythingSeen() async {
        await propertyCheck(count: 500, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = SplitMix64(seed: seed)
            var clock = HybridClock(maximumSkewMillis: 1_000)
            var greatest = HybridTimestamp.zero
            var wall = UInt64.random(in: 0...1_000, using: &rng)
            for _ in 0..<200 {
                wall = UInt64.random(in: 0...3, using: &rng) == 0 ? wall - min(wall, 5) : wall + UInt64.random(in: 0...2, using: &rng)
                if Bool.random(using: &rng) {
                    let counter: UInt32 = Bool.random(using: &rng) ? .max - UInt32.random(in: 0...2, using: &rng) : UInt32.random(in: 0...9, using: &rng)
                    let remote = HybridTimestamp(millis: wall + UInt64.random(in: 0...1_500, using: &rng), counter: counter)
                    if (try? clock.observe(remote, wallMillis: wall)) != nil { greatest = max(greatest, remote) }
                } else {
                    let stamp = clock.tick(wallMillis: wall)
                    #expect(stamp > greatest, "seed \(seed)")
                    greatest = stamp
                }
            }
        }
    }

    @Test func writeStampsBreakTiesByOrigin() {
        let low = ReplicaID(string: "00000000-0000-0000-0000-000000000001")!
        let high = ReplicaID(string: "ff000000-0000-0000-0000-000000000000")!
        let time = HybridTimestamp(millis: 1, counter: 0)
        #expect(WriteStamp(timestamp: time, origin: low) < WriteStamp(timestamp: time, origin: high))
        #expect(WriteStamp(timestamp: HybridTimestamp(millis: 2, counter: 0), origin: low) > WriteStamp(timestamp: time, origin: high))
    }
}
