import Testing
import TallyCore

@Suite struct InParallelTests {
    struct Odd: Error, Equatable { let item: Int }

    @Test func mapsInTheItemsOrderWhetherSpreadOrNot() {
        for count in [0, 1, 4_999, 10_000, 100_003] {
            let items = Array(0..<count)
            #expect(InParallel.map(items, minimumPerThread: 5_000) { $0 * 3 } == items.map { $0 * 3 }, "\(count) items")
        }
    }

    @Test func fewItemsInSmallChunksAreMappedWhole() {
        for count in 1...40 {
            let items = Array(0..<count)
            #expect(InParallel.map(items, minimumPerThread: 1) { $0 + 1 } == items.map { $0 + 1 }, "\(count) items")
        }
    }

    @Test func throwsTheErrorOfTheEarliestChunkThatFailed() {
        let items = Array(0..<20_000)
        // Each chunk of 10,000 fails at its own item; the first chunk's failure is the one thrown.
        #expect(throws: Odd(item: 9_000)) {
            _ = try InParallel.map(items, minimumPerThread: 10_000) { item throws(Odd) in
                if item == 9_000 || item == 19_000 { throw Odd(item: item) }
                return item
            }
        }
        #expect(throws: Odd(item: 19_000)) {
            _ = try InParallel.map(items, minimumPerThread: 10_000) { item throws(Odd) in
                if item == 19_000 { throw Odd(item: item) }
                return item
            }
        }
    }
}
