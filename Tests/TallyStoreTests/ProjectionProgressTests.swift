import Foundation
import Testing
import TallyCore
import TallyLog
@testable import TallyStore
import TallyTestSupport

/// A change feed's wait for news (`ProjectionProgress`): woken by the projector's commits,
/// not by polling; a timeout or a cancel ends a wait, and no waiter is left behind.
@Suite struct ProjectionProgressTests {
    @Test func aWaiterWakesWhenTheProjectorCommitsPastItsCursor() async throws {
        let replica = try TestReplica()
        let writer = try replica.data.openWriter()
        defer { writer.close() }
        let projector = try Projector(directory: replica.data)
        let waiting = Task { await projector.progress.wait(after: 0, atMost: .seconds(30)) }
        while projector.progress.waiting == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let began = ContinuousClock.now
        try projector.apply(try writer.appendLogged([SampleEvents.expenseCreate(amount: 1)]))
        #expect(await waiting.value, "woken by the commit")
        #expect(ContinuousClock.now - began < .seconds(10))
        #expect(projector.progress.waiting == 0)
        // Already past: no wait at all.
        #expect(await projector.progress.wait(after: 0, atMost: .seconds(30)))
    }

    @Test func aTimeoutOrACancelEndsAWaitAndLeavesNoWaiter() async throws {
        let progress = ProjectionProgress()
        progress.advanced(to: 5)
        #expect(await progress.wait(after: 5, atMost: .milliseconds(20)) == false, "nothing past 5 yet")
        #expect(progress.waiting == 0)
        let cancelled = Task { await progress.wait(after: 5, atMost: .seconds(60)) }
        while progress.waiting == 0 { try await Task.sleep(for: .milliseconds(5)) }
        cancelled.cancel()
        #expect(await cancelled.value == false)
        #expect(progress.waiting == 0)
        // Many waiters at once, cancelled at random moments: every one ends, none is left.
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                let task = Task { _ = await progress.wait(after: 5, atMost: .seconds(60)) }
                group.addTask {
                    if index % 2 == 0 { await Task.yield() }
                    task.cancel()
                    _ = await task.value
                }
            }
        }
        #expect(progress.waiting == 0)
        progress.advanced(to: 4)  // never backwards
        #expect(await progress.wait(after: 4, atMost: .milliseconds(1)))
    }
}
