import Foundation
import TallyLedger
import TallyLog

/// Observation: a query's answer as a sequence that yields again whenever it changes, and the
/// change feed of events as the views take them — whichever process wrote them.
///
/// Every write, in this process or another (the widget's, a sync's), moves the views'
/// checkpoint; a watcher looks at it every `interval` (one small read of SQLite's WAL index,
/// no I/O while nothing changes) and asks its query again when it moved.
extension Replica {
    /// How often watchers look for news by default.
    public static let defaultWatchInterval: Duration = .milliseconds(5)

    /// Yields `query`'s answer now, then each time it differs from the last one yielded.
    public func watch<Answer: Equatable & Sendable>(
        every interval: Duration = defaultWatchInterval, _ query: @escaping @Sendable (ReplicaQueries) throws -> Answer
    ) -> AsyncThrowingStream<Answer, any Error> {
        let interval = Intervals.bounded(interval, shortest: .milliseconds(1))
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var seenIndex = try self.query.projectedIndex()
                    var last = try query(try self.query)
                    continuation.yield(last)
                    while !Task.isCancelled {
                        try await Task.sleep(for: interval)
                        let queries = try self.query  // the views again, should the replica take a new identity
                        let index = try queries.projectedIndex()
                        guard index != seenIndex else { continue }
                        seenIndex = index
                        let answer = try query(queries)
                        if answer != last {
                            last = answer
                            continuation.yield(answer)
                        }
                    }
                    continuation.finish()
                } catch is CancellationError {
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The events the views take after log index `cursor`, in log order, as they are taken —
    /// the same feed as the service's `/v1/changes`. Resume from the `index` of the last event
    /// handled to miss nothing and see nothing twice.
    public func changes(after cursor: UInt64, every interval: Duration = defaultWatchInterval) -> AsyncThrowingStream<LoggedEvent, any Error> {
        let interval = Intervals.bounded(interval, shortest: .milliseconds(1))
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var cursor = cursor
                    while !Task.isCancelled {
                        let views = try self.current().views
                        if try views.projectedIndex() > cursor {
                            try views.forEachProjectedChunk(after: cursor) { chunk in
                                for logged in chunk { continuation.yield(logged) }
                                cursor = chunk.last?.index ?? cursor
                                return !Task.isCancelled
                            }
                        }
                        try await Task.sleep(for: interval)
                    }
                    continuation.finish()
                } catch is CancellationError {
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
