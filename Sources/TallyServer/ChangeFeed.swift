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
/// A stream reads forward from its cursor a page at a time (linear in what it sends, memory
/// bounded by one page), ends within a second of its token's revocation — even while its client
/// has stopped reading — and at once when the service shuts down; a write its client does not
/// take within the body timeout (30 s) closes the connection; and a token may hold at most
/// `maxStreamsPerToken` at a time (429 beyond).
struct ChangeFeed {
    let service: TallyService

    func add(to group: RouterGroup<TallyRequestContext>) {
        group.get("changes") { request, context in
            let text = request.uri.queryParameters.get("after") ?? request.headers[HTTPField.Name("Last-Event-ID")!] ?? "0"
            guard let after = UInt64(text) else { throw ValidationError(field: "after", "must be a log index (a previous event's id)") }
            guard let token = context.token else { throw APIError(.unauthorized, "unauthorized", "a change feed needs a token") }
            guard service.openStreams.open(for: token.sha256, limit: service.maxStreamsPerToken) else {
                throw APIError(.tooManyRequests, "too_many_streams",
                               "token '\(token.name)' already holds \(service.maxStreamsPerToken) change feeds; close one (or resume it with Last-Event-ID)")
            }
            let service = self.service
            let guardian = FeedGuard(channel: context.channel, writeDeadline: service.bodyTimeout)
            let body = ResponseBody { writer in
                defer { service.openStreams.close(for: token.sha256) }
                // Closes the connection if the token is revoked or a write stalls (a client that
                // stopped reading), even while this task waits on that write.
                let watching = Task { await guardian.watch { (try? service.tokens.isCurrent(token)) ?? false } }
                defer { watching.cancel() }
                var cursor = after
                var idle = 0
                try await guardian.writing { try await writer.write(ByteBuffer(string: ": tally change feed\n\n")) }
                while !Task.isCancelled, !Task.isShuttingDownGracefully, try service.tokens.isCurrent(token) {
                    let from = cursor
                    let batch = try await service.run { try service.views.changes(after: from, limit: 1_000) }
                    if let last = batch.last {  // one write per page
                        var page = ""
                        for (index, data) in batch { page += "id: \(index)\nevent: change\ndata: \(data)\n\n" }
                        try await guardian.writing { try await writer.write(ByteBuffer(string: page)) }
                        cursor = last.index
                    }
                    if batch.isEmpty {
                        // Wakes at once when the service shuts down (SIGTERM), so it stops with clients attached.
                        try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(250)) }
                        idle += 1
                        // A comment line every second notices a client that is gone (the write
                        // fails), so its slot frees at once; it also keeps proxies from closing the stream.
                        if idle % 4 == 0 { try await guardian.writing { try await writer.write(ByteBuffer(string: ":\n\n")) } }
                    } else {
                        idle = 0
                    }
                }
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
        }
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

    func close(for key: String) {
        counts.withLock { counts in
            counts[key, default: 1] -= 1
            if counts[key] == 0 { counts[key] = nil }
        }
    }
}

/// Watches one change feed from beside it: closes its connection when its token is revoked or
/// a write has waited longer than `writeDeadline` for the client to take it. The feed's own
/// loop cannot notice either while it is blocked in a write to a client that stopped reading.
final class FeedGuard: Sendable {
    let channel: any Channel
    let writeDeadline: Duration
    private let writeStarted = Mutex<ContinuousClock.Instant?>(nil)

    init(channel: any Channel, writeDeadline: Duration) {
        self.channel = channel
        self.writeDeadline = writeDeadline
    }

    /// Runs one write, timed.
    func writing(_ write: () async throws -> Void) async throws {
        writeStarted.withLock { $0 = .now }
        defer { writeStarted.withLock { $0 = nil } }
        try await write()
    }

    /// Checks four times a second until cancelled; closes the connection once it must.
    func watch(isCurrent: () -> Bool) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(250))
            if Task.isCancelled { return }
            let stalled = writeStarted.withLock { $0.map { ContinuousClock.now - $0 > writeDeadline } ?? false }
            if stalled || !isCurrent() {
                channel.close(promise: nil)
                return
            }
        }
    }
}
