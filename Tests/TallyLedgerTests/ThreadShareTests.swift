import Dispatch
import Foundation
import Synchronization
import Testing
import TallyCore
@testable import TallyLedger
import TallyLog
import TallyTestSupport

/// A ledger among many holds at most its share of the process's blocking threads
/// (`LedgerLimits.threadsAtOnce`, `Ledger.blocking`): one household's slow reads — as many
/// as its connections can send — leave threads for every other household's requests.
@Suite struct ThreadShareTests {
    let folder = TemporaryDirectory("tally-thread-share")

    /// Ledger A asks for every blocking thread there is, each read held until the test lets it
    /// go; ledger B's read still runs at once. (With A's share set to all the threads, B's read
    /// waited until A's were let go: checked when this was written.) `waitUntil` is
    /// WriteBatcherTests'.
    @Test func oneLedgersSlowReadsLeaveThreadsForAnother() async throws {
        let limits = LedgerLimits(threadsAtOnce: LedgerLimits.hostedThreadsAtOnce)
        let a = try Ledger(directory: try DataDirectory.create(path: folder.file("a"), name: "a"), limits: limits)
        let b = try Ledger(directory: try DataDirectory.create(path: folder.file("b"), name: "b"), limits: limits)
        defer { a.close(); b.close() }
        let gate = DispatchSemaphore(value: 0)
        let slowReads = (0..<BlockingThreads.count).map { _ in
            Task { try await a.read { _ in gate.wait() } }
        }
        // A's reads hold its share and wait for the rest of it.
        try await waitUntil { a.threadTurns.counts == (LedgerLimits.hostedThreadsAtOnce, BlockingThreads.count - LedgerLimits.hostedThreadsAtOnce) }
        #expect(a.threadTurns.counts.running == LedgerLimits.hostedThreadsAtOnce, "A holds its share and no more")

        let answered = Mutex(false)
        let other = Task {
            let count = try await b.read { views in try views.projectedIndex() }
            answered.withLock { $0 = true }
            return count
        }
        try await waitUntil { answered.withLock { $0 } }
        #expect(answered.withLock { $0 }, "B's read ran while A's waited for their turn")

        for _ in slowReads { gate.signal() }
        for read in slowReads { try await read.value }
        #expect(try await other.value == 0)
        #expect(a.threadTurns.counts == (0, 0), "every one of A's reads had its turn")
    }

    /// Turns: never more than `atOnce` at a time, and one past
    /// `maxWaiting` refused at once with the caller's own error.
    @Test func turnsKeepTheirCountAndRefusePastTheWaiting() async throws {
        struct Busy: Error {}
        final class Seen: Sendable { let counts = Mutex((running: 0, most: 0, done: 0, refused: 0)) }
        let (turns, seen) = (Turns(atOnce: 2, maxWaiting: 3), Seen())
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    do {
                        try await turns.run(refusal: Busy()) {
                            seen.counts.withLock {
                                $0.running += 1; $0.most = max($0.most, $0.running)
                            }
                            try await Task.sleep(for: .milliseconds(100))
                            seen.counts.withLock {
                                $0.running -= 1; $0.done += 1
                            }
                        }
                    } catch is Busy {
                        seen.counts.withLock { $0.refused += 1 }
                    } catch { Issue.record("\(error)") }
                }
            }
        }
        let counts = seen.counts.withLock { $0 }
        #expect(counts.most == 2, "two at a time")
        #expect(counts.refused >= 10 - 2 - 3, "past two running and three waiting, refused: \(counts.refused)")
        #expect(counts.done + counts.refused == 10)
        #expect(turns.counts == (0, 0))
        #expect(try await turns.run(refusal: Busy()) { 7 } == 7, "free again")
    }

    /// Exports are built and sent one at a time per ledger, four more wait, and one past them
    /// is refused at once (`LedgerError.exportBusy`): each holds the whole ledger in memory
    /// until it is sent. The turn lasts until the caller leaves it, or frees its ticket.
    @Test func exportsAreBuiltAndSentOneAtATime() async throws {
        let ledger = try Ledger(directory: try DataDirectory.create(path: folder.file("exports"), name: "exports"))
        defer { ledger.close() }
        _ = try await ledger.create(.expense, [.amount: .int(1)], actor: "t")
        let gate = DispatchSemaphore(value: 0)
        let building = Task {
            try await ledger.export { views in
                gate.wait(); return try views.exportJSONLines().count
            }.value
        }
        try await waitUntil { ledger.exportTurns.counts.running == 1 }
        let waiting = (0..<4).map { _ in Task { try await ledger.export { views in try views.exportJSONLines().count }.value } }
        try await waitUntil { ledger.exportTurns.counts.waiting == 4 }
        #expect(ledger.exportTurns.counts == (1, 4))
        await #expect(throws: LedgerError.self, "the sixth is refused at once") { try await ledger.export { _ in 0 } }
        gate.signal()
        let first = try await building.value
        #expect(first > 0)
        for export in waiting { #expect(try await export.value == first, "each waiting export built in its turn (its ticket freed)") }
        #expect(ledger.exportTurns.counts == (0, 0))

        let sending = try await ledger.export { _ in 7 }
        #expect(sending.value == 7 && ledger.exportTurns.counts.running == 1, "held while it is sent")
        sending.turn.leave()
        sending.turn.leave()
        #expect(ledger.exportTurns.counts == (0, 0), "given back once")
    }
}
