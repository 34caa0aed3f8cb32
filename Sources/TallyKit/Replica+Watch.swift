import Foundation
import TallyLedger
import TallyCore
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

    /// The events the views take after `cursor`, in log order, as they are taken — the same
    /// feed as the service's `/v1/changes`. Resume from the last event handled
    /// (`ChangeCursor(event)`, which an app keeps as JSON) to miss nothing and see nothing twice.
    ///
    /// A log index means something only in the log it came from: when this folder's log is
    /// replaced — a split at sync builds the replica anew (docs/TALLYKIT.md, "Restored copies"),
    /// or the folder is restored from an older backup — the feed ends with
    /// `ChangeFeedError.cursorNotInThisLog` instead of going on from a position that now names
    /// other events. The app then reads what it shows from the queries again and follows the
    /// feed from `.start`.
    public func changes(after cursor: ChangeCursor, every interval: Duration = defaultWatchInterval) -> AsyncThrowingStream<LoggedEvent, any Error> {
        feed(after: cursor.index, lastHash: cursor.index == 0 ? nil : EventHash(hex: cursor.hash) ?? .zero, every: interval)  // no event hashes to zero
    }

    /// `changes(after:)` from a bare log index, taken on trust for its first read (nothing
    /// says which event it named); from the first event it yields on, the feed checks its
    /// position as `changes(after: ChangeCursor)` does.
    public func changes(after index: UInt64, every interval: Duration = defaultWatchInterval) -> AsyncThrowingStream<LoggedEvent, any Error> {
        feed(after: index, lastHash: nil, every: interval)
    }

    private func feed(after start: UInt64, lastHash hash: EventHash?, every interval: Duration) -> AsyncThrowingStream<LoggedEvent, any Error> {
        let interval = Intervals.bounded(interval, shortest: .milliseconds(1))
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var position = (index: start, hash: hash)
                    var checkedIn: ReplicaHome?  // the folder in which the log last held the cursor's event
                    var unreadable = 0
                    while !Task.isCancelled {
                        let opened: Opened
                        do { opened = try self.current() } catch  where unreadable < Self.feedOpenRetries {
                            unreadable += 1  // a split renaming its folder into place: a moment without replica.json
                            try await Task.sleep(for: interval)
                            continue
                        }
                        unreadable = 0
                        // At the first look, and whenever the folder is another one (a split, a
                        // restore): does its log still hold the event the cursor names?
                        if let hash = position.hash, checkedIn != opened.home {
                            guard try Self.log(of: opened.directory, holds: hash, at: position.index) else {
                                throw ChangeFeedError.cursorNotInThisLog(index: position.index)
                            }
                            checkedIn = opened.home
                        }
                        if try opened.views.projectedIndex() > position.index {
                            position = try Self.yieldEvents(of: opened.views, after: position) { logged in
                                continuation.yield(logged)
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

    /// How many looks in a row a feed lets the folder be unreadable before it ends (a split
    /// puts its new folder in place with two renames).
    static let feedOpenRetries = 200

    /// Hands `yield` the projected events after `position`, first checking — when its hash is
    /// known — that the event at it is still the one it named; answers the new position.
    private static func yieldEvents(
        of views: LedgerViews, after position: (index: UInt64, hash: EventHash?), _ yield: (LoggedEvent) -> Bool
    ) throws -> (index: UInt64, hash: EventHash?) {
        var position = position
        var unchecked = position.hash != nil
        try views.forEachProjectedChunk(after: unchecked ? position.index - 1 : position.index) { chunk in
            var events = chunk[...]
            if unchecked {
                guard let named = events.first, named.index == position.index, named.hash == position.hash else {
                    throw ChangeFeedError.cursorNotInThisLog(index: position.index)
                }
                unchecked = false
                events = events.dropFirst()
            }
            for logged in events {
                position = (logged.index, logged.hash)
                guard yield(logged) else { return false }
            }
            return true
        }
        // Views that say they hold events past the cursor over a log that lacks its event.
        if unchecked { throw ChangeFeedError.cursorNotInThisLog(index: position.index) }
        return position
    }

    /// Whether the log in `directory` holds the event `hash` at `index` (the views may lag
    /// behind the log, never the log behind an event a feed handed out).
    private static func log(of directory: DataDirectory, holds hash: EventHash, at index: UInt64) throws -> Bool {
        var found = false
        try directory.reader.forEachEvent(from: index) { logged in
            found = logged.index == index && logged.hash == hash
            return false
        }
        return found
    }
}

/// Where a change feed is: the last event handled, by its log index and its hash (so that a
/// feed resumed in another log — the replica rebuilt by a split — says so instead of going on).
/// Codable: an app keeps it between launches.
public struct ChangeCursor: Codable, Hashable, Sendable {
    /// The last event's log index (0: before the first).
    public var index: UInt64
    /// Its hash, lowercase hex ("" before the first).
    public var hash: String

    /// Before the first event.
    public static let start = ChangeCursor(index: 0, hash: "")

    public init(index: UInt64, hash: String) { (self.index, self.hash) = (index, hash) }

    /// Just after `event`.
    public init(_ event: LoggedEvent) { self.init(index: event.index, hash: event.hash.description) }
}

/// Why a change feed ended.
public enum ChangeFeedError: Error, Equatable, CustomStringConvertible {
    /// The log no longer holds, at the cursor's index, the event the cursor named.
    case cursorNotInThisLog(index: UInt64)

    public var description: String {
        switch self {
        case .cursorNotInThisLog(let index):
            "this replica's log no longer holds, at index \(index), the event the change feed's cursor named: the replica was rebuilt (split from a copy at sync) or restored from a backup since. Read what you show from the queries again and follow changes(after: .start)"
        }
    }
}
