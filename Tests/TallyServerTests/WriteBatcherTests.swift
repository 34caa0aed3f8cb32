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

        init(appendDelay: UInt32 = 0, gated: Bool = false) {
            self.appendDelay = appendDelay
            gate = gated ? DispatchSemaphore(value: 0) : nil
        }

        func append(_ drafts: [Int]) throws -> [Int] {
            usleep(appendDelay)  // an fdatasync: others queue meanwhile
            if drafts == [0] { gate?.wait() }
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
    @Test func concurrentWritesEachGetTheirOwnAndShareRounds() throws {
        let log = NumberLog(appendDelay: 2_000)
        let batcher = WriteBatcher<Int, Int>(append: log.append, project: { written in log.state.withLock { $0.projected += written } })
        let failures = Mutex<[String]>([])
        let threads = 16, writesEach = 20
        let done = DispatchGroup()
        for thread in 0..<threads {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                for step in 0..<writesEach {
                    let draft = thread * 1_000 + step
                    do {
                        let (position, projectionError) = try batcher.write(draft)
                        let entry = log.state.withLock { $0.entries[position - 1] }
                        let projected = log.state.withLock { $0.projected.contains(position) }
                        if entry != draft || !projected || projectionError != nil {
                            failures.withLock { $0.append("\(draft): position \(position) holds \(entry), projected \(projected)") }
                        }
                    } catch {
                        failures.withLock { $0.append("\(draft): \(error)") }
                    }
                }
            }
        }
        done.wait()
        #expect(failures.withLock { $0 } == [])
        let state = log.state.withLock { $0 }
        #expect(state.entries.sorted() == (0..<threads).flatMap { thread in (0..<writesEach).map { thread * 1_000 + $0 } })
        #expect(state.projected.sorted() == Array(1...(threads * writesEach)))
        #expect(state.batches.count < threads * writesEach, "rounds were shared: \(state.batches.count) appends")
    }

    /// Writers blocking threads and writers suspending tasks mix in the same rounds: each gets
    /// its own position, and a task handed the lead runs its round (no write is left waiting).
    @Test func blockingAndSuspendingWritersShareRounds() async throws {
        let log = NumberLog(appendDelay: 2_000)
        let batcher = WriteBatcher<Int, Int>(append: log.append, project: { written in log.state.withLock { $0.projected += written } })
        let threads = Mutex<[Int: Int]>([:])
        let done = DispatchGroup()
        for thread in 0..<8 {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                for step in 0..<10 {
                    let draft = thread * 1_000 + step
                    if let (position, _) = try? batcher.write(draft) { threads.withLock { $0[draft] = position } }
                }
            }
        }
        let tasks = try await withThrowingTaskGroup(of: [(Int, Int)].self) { group in
            for task in 0..<8 {
                group.addTask {
                    var positions: [(Int, Int)] = []
                    for step in 0..<10 {
                        let draft = 100_000 + task * 1_000 + step
                        positions.append((draft, try await batcher.write(draft).written))
                    }
                    return positions
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        await withCheckedContinuation { (resume: CheckedContinuation<Void, Never>) in
            done.notify(queue: .global()) { resume.resume() }
        }
        let state = log.state.withLock { $0 }
        let positions = threads.withLock { $0 }.map { ($0.key, $0.value) } + tasks
        #expect(positions.count == 160)
        for (draft, position) in positions { #expect(state.entries[position - 1] == draft) }
        #expect(state.projected.sorted() == Array(1...160))
        #expect(state.batches.count < 160, "rounds were shared: \(state.batches.count) appends")
    }

    /// A draft the log refuses fails alone: the others of its round are appended one by one.
    @Test func aRefusedDraftDoesNotFailItsNeighbours() throws {
        let log = NumberLog(gated: true)
        let batcher = WriteBatcher<Int, Int>(append: log.append, project: { _ in })
        let outcomes = Mutex<[Int: Bool]>([:])
        let done = DispatchGroup()
        // A first write holds its round open (its append waits on the gate) while eight queue
        // behind it; they then make one round together.
        done.enter()
        Thread.detachNewThread {
            defer { done.leave() }
            _ = try? batcher.write(0)
        }
        usleep(100_000)
        for draft in [1, 2, -3, 4, 5, -6, 7, 8] {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                let appended = (try? batcher.write(draft)) != nil
                outcomes.withLock { $0[draft] = appended }
            }
        }
        usleep(300_000)
        log.gate?.signal()
        done.wait()
        #expect(outcomes.withLock { $0 } == [1: true, 2: true, -3: false, 4: true, 5: true, -6: false, 7: true, 8: true])
        #expect(log.state.withLock { $0.entries.sorted() } == [0, 1, 2, 4, 5, 7, 8])
        #expect(log.state.withLock { $0.refused.first?.count } == 8, "the eight were tried as one batch first")
    }

    /// When projecting fails, the writes are durable all the same: each gets its position and
    /// the projection's error, and is not appended again.
    @Test func aFailedProjectionIsReportedNotRetried() throws {
        struct DiskFull: Error {}
        let log = NumberLog()
        let batcher = WriteBatcher<Int, Int>(append: log.append, project: { _ in throw DiskFull() })
        let (position, projectionError) = try batcher.write(42)
        #expect(position == 1)
        #expect(projectionError is DiskFull)
        #expect(log.state.withLock { $0.entries } == [42])
        #expect(throws: NumberLog.Refused.self) { try batcher.write(-1) }
        #expect(try batcher.write(43).written == 2, "the batcher leads again after a failed round")
    }
}
