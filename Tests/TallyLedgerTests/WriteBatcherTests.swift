import Foundation
import Synchronization
import Testing
@testable import TallyLedger

/// `WriteBatcher`: concurrent writes appended and projected together. Drafts are numbers
/// here; `append` plays the log (positions handed out in order, all of a batch or none) and
/// `project` the views.
@Suite struct WriteBatcherTests {
    /// A log of numbers: refuses any batch holding a negative one.
    final class NumberLog: @unchecked Sendable {
        let state = Mutex<(entries: [Int], batches: [Int], projected: [Int], refused: [[Int]])>(([], [], [], []))
        let appendDelay: UInt32
        /// If set, appending the draft 0 waits for it (a round held open while others queue).
        let gate: DispatchSemaphore?
        /// Set once the draft 0's append is waiting for the gate.
        let gateReached = Mutex(false)

        init(appendDelay: UInt32 = 0, gated: Bool = false) {
            self.appendDelay = appendDelay
            gate = gated ? DispatchSemaphore(value: 0) : nil
        }

        func append(_ drafts: [Int]) throws -> [Int] {
            usleep(appendDelay)  // an fdatasync: others queue meanwhile
            if drafts == [0], let gate {
                gateReached.withLock { $0 = true }
                gate.wait()
            }
            if drafts.contains(where: { $0 < 0 }) {
                state.withLock { $0.refused.append(drafts) }
                throw Refused()
            }
            return state.withLock { state in
                state.batches.append(drafts.count)
                return drafts.map { draft in
                    state.entries.append(draft)
                    return state.entries.count  // the position: what was written
                }
            }
        }

        struct Refused: Error {}
    }

    /// Every writer gets back its own position, each draft is appended and projected exactly
    /// once, and writers that arrive while a round runs share the next one.
    @Test func concurrentWritesEachGetTheirOwnAndShareRounds() async throws {
        let log = NumberLog(appendDelay: 2_000)
        let batcher = WriteBatcher<Int, Int>(append: log.append, project: { written in log.state.withLock { $0.projected += written } })
        let writers = 16, writesEach = 20
        let failures = await withTaskGroup(of: [String].self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var failures: [String] = []
                    for step in 0..<writesEach {
                        let draft = writer * 1_000 + step
                        do {
                            let (position, projectionError) = try await batcher.write(draft)
                            let entry = log.state.withLock { $0.entries[position - 1] }
                            let projected = log.state.withLock { $0.projected.contains(position) }
                            if entry != draft || !projected || projectionError != nil {
                                failures.append("\(draft): position \(position) holds \(entry), projected \(projected)")
                            }
                        } catch {
                            failures.append("\(draft): \(error)")
                        }
                    }
                    return failures
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(failures == [])
        let state = log.state.withLock { $0 }
        let expected: [Int] = (0..<writers).flatMap { writer in (0..<writesEach).map { step in writer * 1_000 + step } }
        #expect(state.entries.sorted() == expected)
        #expect(state.projected.sorted() == Array(1...(writers * writesEach)))
        #expect(state.batches.count < writers * writesEach, "rounds were shared: \(state.batches.count) appends")
    }

    /// A draft the log refuses fails alone: the others of its round are appended one by one.
    @Test func aRefusedDraftDoesNotFailItsNeighbours() async throws {
        let log = NumberLog(gated: true)
        let batcher = WriteBatcher<Int, Int>(append: log.append, project: { _ in })
        // A first write holds its round open (its append waits on the gate) while eight queue
        // behind it; they then make one round together.
        let first = Task { _ = try? await batcher.write(0) }
        try await waitUntil { log.gateReached.withLock { $0 } }
        let outcomes = Task {
            await withTaskGroup(of: (Int, Bool).self) { group in
                for draft in [1, 2, -3, 4, 5, -6, 7, 8] {
                    group.addTask { (draft, (try? await batcher.write(draft)) != nil) }
                }
                return await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
            }
        }
        try await waitUntil { batcher.queued == 8 }  // all eight wait behind the held round
        log.gate?.signal()
        await first.value
        #expect(await outcomes.value == [1: true, 2: true, -3: false, 4: true, 5: true, -6: false, 7: true, 8: true])
        #expect(log.state.withLock { $0.entries.sorted() } == [0, 1, 2, 4, 5, 7, 8])
        #expect(log.state.withLock { $0.refused.first?.count } == 8, "the eight were tried as one batch first")
    }

    /// When projecting fails, the writes are durable all the same: each gets its position and
    /// the projection's error, and is not appended again.
    @Test func aFailedProjectionIsReportedNotRetried() async throws {
        struct DiskFull: Error {}
        let log = NumberLog()
        let batcher = WriteBatcher<Int, Int>(append: log.append, project: { _ in throw DiskFull() })
        let (position, projectionError) = try await batcher.write(42)
        #expect(position == 1)
        #expect(projectionError is DiskFull)
        #expect(log.state.withLock { $0.entries } == [42])
        await #expect(throws: NumberLog.Refused.self) { try await batcher.write(-1) }
        #expect(try await batcher.write(43).written == 2, "the batcher leads again after a failed round")
    }
}

/// Waits until `condition` holds, checking every 10 ms, for at most 120 s (a test process under
/// load can leave a new task unscheduled for long).
func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(120)
    while !condition() {
        guard ContinuousClock.now < deadline else { throw WaitedTooLong() }
        try await Task.sleep(for: .milliseconds(10))
    }
}

struct WaitedTooLong: Error {}
