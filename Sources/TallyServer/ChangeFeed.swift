import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle
import Synchronization
import TallyCore
import TallyLog
import TallyLedger

/// `GET /v1/changes?after=CURSOR` (or a `Last-Event-ID` header): a server-sent event for every
/// event after the cursor, local or replicated, as soon as it is projected; the event's log
/// index is its id, so a client resumes from the last one it saw.
///
/// A stream reads forward from its cursor in one pass over the log up to what the views show
/// (linear in what it sends, memory bounded by a few pages: `ChangePageQueue`), ends within a second of its token's revocation — even while its client
/// has stopped reading — and at once when the service shuts down; a write its client does not
/// take within the body timeout (30 s) closes the connection; and a token may hold at most
/// `maxStreamsPerToken` at a time (429 beyond).
struct ChangeFeed {
    static let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-cache"]

    /// The log index to start after: `?after=`, else `Last-Event-ID`, else 0.
    static func cursor(_ request: Request) throws -> UInt64 {
        let text = request.uri.queryParameters.get("after") ?? request.headers[HTTPField.Name("Last-Event-ID")!] ?? "0"
        guard let after = UInt64(text) else { throw ValidationError(field: "after", "must be a log index (a previous event's id)") }
        return after
    }

    static let after = [
        APIParameter.query("after", "The log index to start after (default: Last-Event-ID, else 0)", schema: "{type: integer, minimum: 0}"),
        APIParameter.header("Last-Event-ID", "The last event's id a reconnecting EventSource received: where to go on from, without after"),
    ]

    func add(to group: APIRoutes) {
        // HEAD of its own: the GET's handler takes one of the token's feeds and gives it back
        // only when its body ends, and a HEAD (Hummingbird's, from the GET) never runs the body.
        let check = APIOperation(
            "Checks the cursor and the credentials, opening no stream.", parameters: Self.after,
            responses: [(200, APIResponse.text("The stream would open."))],
            errors: [400])
        group.head("changes", check) { request, context in
            _ = try Self.cursor(request)
            return Response(status: .ok, headers: Self.headers)
        }
        let stream = APIOperation(
            parameters: Self.after,
            responses: [(200, APIResponse.content("Server-sent events, one per log event after the cursor.", "text/event-stream: {}"))], errors: [400, 429])
        group.get("changes", stream) { request, context in
            let service = try context.service()
            let after = try Self.cursor(request)
            guard let caller = context.caller else { throw APIError(.unauthorized, "unauthorized", "a change feed needs a caller") }
            if let limit = service.usage.quota.streams, service.openStreams.total >= limit {
                throw APIError(.tooManyRequests, "quota_exceeded", "this ledger holds its quota of \(limit) change feeds open; close one")
            }
            guard service.openStreams.open(for: caller.streamKey, limit: service.maxStreamsPerToken) else {
                throw APIError(
                    .tooManyRequests, "too_many_streams",
                    "\(caller.description) already holds \(service.maxStreamsPerToken) change feeds; close one (or resume it with Last-Event-ID)")
            }
            let guardian = AnswerGuard(channel: context.channel, writeDeadline: service.bodyTimeout)
            let body = ResponseBody { writer in
                defer { service.openStreams.close(for: caller.streamKey) }
                // Closes the connection if the token is revoked or a write stalls (a client that
                // stopped reading), even while this task waits on that write.
                let watching = Task { await guardian.watch { (try? caller.isCurrent(in: service)) ?? false } }
                defer { watching.cancel() }
                var cursor = after
                var quietSeconds = 0
                var lookAtViews = true
                try await guardian.writing { try await writer.write(ByteBuffer(string: ": tally change feed\n\n")) }
                while !Task.isCancelled, !Task.isShuttingDownGracefully, try caller.isCurrent(in: service) {
                    if lookAtViews, try await service.ledger.read({ views in try views.projectedIndex() }) > cursor {
                        // One pass over the log up to what the views show, a page (one write) at a time.
                        let pages = ChangePageQueue(views: service.views, after: cursor)
                        defer { pages.cancel() }
                        while let page = try await pages.next() {
                            try await guardian.writing(ByteBuffer(bytes: page.bytes)) { try await writer.write($0) }
                            cursor = page.lastIndex
                            let stillCurrent = try caller.isCurrent(in: service)
                            if Task.isCancelled || Task.isShuttingDownGracefully || !stillCurrent { break }
                        }
                        continue
                    }
                    // Sleeps until the projector passes the cursor (woken, not polling), a second
                    // at most, and at once when the service shuts down (SIGTERM), so it stops
                    // with clients attached. The views are looked at when woken, and every ten
                    // quiet seconds besides (a safety net: the projector's word is a hint).
                    let news = await cancelWhenGracefulShutdown { [cursor] in await service.views.waitForProjection(after: cursor, atMost: .seconds(1)) }
                    quietSeconds = news ? 0 : quietSeconds + 1
                    lookAtViews = news || quietSeconds % 10 == 0
                    // A quiet second ends with a comment line: it notices a client that is gone
                    // (the write fails), so its slot frees at once, and keeps proxies from
                    // closing the stream.
                    if !news { try await guardian.writing { try await writer.write(ByteBuffer(string: ":\n\n")) } }
                }
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: Self.headers, body: body)
        }
    }
}

/// The pages of one pass of a change feed, read and rendered on a thread of their own
/// (`LedgerViews.forEachProjectedChunk`) at most `capacity` pages ahead of the client: the log is
/// read once from the feed's cursor, not re-scanned for every page.
final class ChangePageQueue: @unchecked Sendable {
    typealias Page = (bytes: [UInt8], lastIndex: UInt64)
    private let condition = NSCondition()
    // Guarded by `condition`:
    private var pages: [Page] = []
    private var finished = false
    private var failure: (any Error)?
    private var cancelled = false
    private var waiting: CheckedContinuation<Page?, any Error>?
    let capacity = 4

    /// Starts reading the events after `after`, up to what the views show now.
    init(views: LedgerViews, after: UInt64) {
        Thread.detachNewThread { [self] in
            do {
                try views.forEachProjectedChunk(after: after, chunkSize: Self.pageSize) { events in
                    var page: [UInt8] = []
                    page.reserveCapacity(events.count * 640)  // a ledger event is ~570 bytes of server-sent event
                    for logged in events { Self.appendServerSentEvent(logged, to: &page) }
                    return deliver((page, events[events.count - 1].index))
                }
                finish(nil)
            } catch {
                finish(error)
            }
        }
    }

    /// Events in one page: one write to the client.
    static let pageSize = 1_000

    /// One event as a server-sent event: its log index as the id, its JSON as the data.
    static func appendServerSentEvent(_ logged: LoggedEvent, to out: inout [UInt8]) {
        out.append(contentsOf: "id: ".utf8)
        JSONText.appendDecimal(Int64(clamping: logged.index), to: &out)
        out.append(contentsOf: "\nevent: change\ndata: ".utf8)
        logged.event.appendJSON(index: logged.index, hash: logged.hash, to: &out)
        out.append(contentsOf: "\n\n".utf8)
    }

    /// The next page; nil once the pass has ended.
    func next() async throws -> Page? {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            if !pages.isEmpty {
                let page = pages.removeFirst()
                condition.broadcast()
                condition.unlock()
                continuation.resume(returning: page)
            } else if finished {
                let failure = failure
                condition.unlock()
                if let failure { continuation.resume(throwing: failure) } else { continuation.resume(returning: nil) }
            } else {
                waiting = continuation
                condition.unlock()
            }
        }
    }

    /// Stops the reading thread at its next page.
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// Hands a page to a waiting client or queues it, waiting while `capacity` are queued;
    /// false once cancelled.
    private func deliver(_ page: Page) -> Bool {
        condition.lock()
        while pages.count >= capacity, !cancelled { condition.wait() }
        guard !cancelled else {
            condition.unlock()
            return false
        }
        if let waiter = waiting {
            waiting = nil
            condition.unlock()
            waiter.resume(returning: page)
        } else {
            pages.append(page)
            condition.unlock()
        }
        return true
    }

    private func finish(_ error: (any Error)?) {
        condition.lock()
        finished = true
        failure = error
        let waiter = waiting
        waiting = nil
        condition.unlock()
        if let error { waiter?.resume(throwing: error) } else { waiter?.resume(returning: nil) }
    }
}

/// How many change feeds each token holds open (by its hash).
final class OpenStreams: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    /// Counts one more stream for `key` unless it holds `limit` already.
    func open(for key: String, limit: Int) -> Bool {
        counts.withLock { counts in
            guard counts[key, default: 0] < limit else { return false }
            counts[key, default: 0] += 1
            return true
        }
    }

    /// How many `key` holds.
    func count(for key: String) -> Int { counts.withLock { $0[key, default: 0] } }

    /// How many are open, whoever holds them.
    var total: Int { counts.withLock { $0.values.reduce(0, +) } }

    func close(for key: String) {
        counts.withLock { counts in
            counts[key, default: 1] -= 1
            if counts[key] == 0 { counts[key] = nil }
        }
    }
}
