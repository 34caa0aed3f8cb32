import Foundation

/// Runs a producer on its own thread one step ahead of the caller: while the caller consumes
/// one chunk, the next is being made (a log read decodes the next frame while the projector
/// folds this one; a first load encodes the next rows while SQLite writes these — both cores
/// at work). At most `depth` chunks wait, which bounds memory.
/// An error on either side stops both, and `run` returns only once the producer has stopped.
public final class Prefetcher<Chunk: Sendable>: @unchecked Sendable {
    // @unchecked: every stored property is guarded by `condition`.

    /// What `emit` tells a producer once the consumer has stopped: stop too.
    public struct Stopped: Error {}

    private let condition = NSCondition()
    private var ready: [Chunk] = []
    private var produced = false
    private var producerError: (any Error)?
    private var stopped = false
    private let depth: Int

    private init(depth: Int) { self.depth = depth }

    /// Calls `produce` on a new thread with an `emit` that queues a chunk (waiting while
    /// `depth` are queued; throwing `Stopped` once the consumer has stopped), and `consume` on
    /// the calling thread with each chunk in order.
    public static func run(
        depth: Int = 2, produce: @escaping @Sendable (_ emit: (Chunk) throws -> Void) throws -> Void,
        consume: (Chunk) throws -> Void
    ) throws {
        let prefetcher = Prefetcher(depth: depth)
        let thread = Thread { prefetcher.runProducer(produce) }
        thread.name = "tally-prefetch"
        thread.start()
        try prefetcher.consumeAll(consume)
    }

    private func runProducer(_ produce: (_ emit: (Chunk) throws -> Void) throws -> Void) {
        var failure: (any Error)?
        do { try produce(emit) } catch { failure = error }
        condition.lock()
        if !(failure is Stopped) { producerError = failure }
        produced = true
        condition.broadcast()
        condition.unlock()
    }

    private func emit(_ chunk: Chunk) throws {
        condition.lock()
        defer { condition.unlock() }
        while ready.count >= depth && !stopped { condition.wait() }
        if stopped { throw Stopped() }
        ready.append(chunk)
        condition.broadcast()
    }

    private func consumeAll(_ consume: (Chunk) throws -> Void) throws {
        while true {
            condition.lock()
            while ready.isEmpty && !produced { condition.wait() }
            if ready.isEmpty {
                defer { condition.unlock() }
                if let producerError { throw producerError }
                return
            }
            let chunk = ready.removeFirst()
            condition.broadcast()
            condition.unlock()
            do { try consume(chunk) } catch {
                condition.lock()
                stopped = true
                condition.broadcast()
                while !produced { condition.wait() }
                condition.unlock()
                throw error
            }
        }
    }
}
