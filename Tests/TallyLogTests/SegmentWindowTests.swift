import PropertyBased
import Testing
@testable import TallyLog
import TallyTestSupport

@Suite struct SegmentWindowTests {
    /// Whatever frames pass, the window is the newest `windowSize` bytes of all of them, in
    /// order — what the writer compressed against and what a reader decompresses against.
    @Test func theWindowIsAlwaysTheNewestBytes() async {
        await propertyCheck(count: 60, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var random = SplitMix64(seed: seed)
            var window = SegmentWindow()
            var everything: [UInt8] = []
            for _ in 0..<Int(random.next() % 120) {
                // Mostly small frames (one event), some around and above the window's size.
                let length = random.next() % 4 == 0 ? Int(random.next() % UInt64(2 * SegmentFormat.windowSize)) : Int(random.next() % 600)
                let frame = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                frame.withUnsafeBytes { window.advance(past: $0) }
                everything += frame
                let expected = Array(everything.suffix(SegmentFormat.windowSize))
                #expect(window.withBytes { Array($0) } == expected)
            }
        }
    }
}
