import Foundation

/// Work on many independent items spread over the machine's cores, results in the items'
/// order: what reading a statement of 100,000 rows and keying them do (issue 35) — each row
/// alone — while the views' writes after them keep one core busy at a time.
public enum InParallel {
    /// `items.map(transform)`, in chunks of at least `minimumPerThread` items on as many threads
    /// as there are cores; on the calling thread alone when there are fewer items. Throws the
    /// error of the earliest chunk that failed.
    public static func map<Item: Sendable, Output: Sendable, Failure: Error>(
        _ items: [Item], minimumPerThread: Int = 5_000, _ transform: @Sendable (Item) throws(Failure) -> Output
    ) throws(Failure) -> [Output] {
        let threads = min(ProcessInfo.processInfo.activeProcessorCount, items.count / max(minimumPerThread, 1))
        guard threads > 1 else {
            var outputs: [Output] = []
            outputs.reserveCapacity(items.count)
            for item in items { outputs.append(try transform(item)) }
            return outputs
        }
        let chunkSize = (items.count + threads - 1) / threads
        let chunkCount = (items.count + chunkSize - 1) / chunkSize  // at most `threads`, none empty
        // One slot per chunk, each written by the one thread that maps that chunk.
        nonisolated(unsafe) let chunks = UnsafeMutableBufferPointer<Result<[Output], Failure>?>.allocate(capacity: chunkCount)
        chunks.initialize(repeating: nil)
        defer {
            _ = chunks.deinitialize()
            chunks.deallocate()
        }
        DispatchQueue.concurrentPerform(iterations: chunkCount) { chunk in
            let range = (chunk * chunkSize)..<min(items.count, (chunk + 1) * chunkSize)
            var outputs: [Output] = []
            outputs.reserveCapacity(range.count)
            do throws(Failure) {
                for item in items[range] { outputs.append(try transform(item)) }
                chunks[chunk] = .success(outputs)
            } catch {
                chunks[chunk] = .failure(error)
            }
        }
        var outputs: [Output] = []
        outputs.reserveCapacity(items.count)
        for chunk in chunks {
            switch chunk {
            case .success(let mapped)?: outputs += mapped
            case .failure(let error)?: throw error
            case nil: continue  // every chunk ran
            }
        }
        return outputs
    }
}
