import HTTPTypes
import Hummingbird
import NIOCore

/// An answer whose client stopped reading held its connection — and whatever makes the answer
/// (a pull's thread reading the log, a download's file) — for as long as the client liked:
/// Hummingbird's idle timeout does not run while an answer is being written. An answer larger
/// than `watchedFrom`, or streamed, is written under an `AnswerGuard`, in pieces of 64 KiB: a
/// piece the client has not taken within the ledger's body timeout (`--idle-timeout`) closes
/// the connection — a client that takes nothing, not a slow one. Smaller answers fit in the
/// socket's buffers and are not watched (no task for them). (A cluster's forwarded answers are
/// guarded where they are forwarded, `ClusterHosting`, which answers before this runs.)
struct StalledAnswerMiddleware: RouterMiddleware {
    typealias Context = TallyRequestContext

    /// The smallest answer watched (streamed ones, whose size is not known, always are).
    static let watchedFrom = 256 << 10
    /// The deadline where no ledger is named (the web app's files).
    static let defaultDeadline = Duration.seconds(30)

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        guard (response.body.contentLength ?? .max) > Self.watchedFrom else { return response }
        // A change feed guards its own writes (and its token's revocation): no second watcher
        // for each of its thousands of streams.
        guard response.headers[.contentType] != ChangeFeed.headers[.contentType] else { return response }
        let deadline = (try? context.service())?.bodyTimeout ?? Self.defaultDeadline
        let (body, channel) = (response.body, context.channel)
        response.body = ResponseBody(contentLength: body.contentLength) { writer in
            let guardian = AnswerGuard(channel: channel, writeDeadline: deadline)
            let watching = Task { await guardian.watch { true } }
            defer { watching.cancel() }
            try await body.write(TimedWriter(inner: writer, guardian: guardian))
        }
        return response
    }

    /// Each write timed by the guard.
    private struct TimedWriter: ResponseBodyWriter {
        var inner: any ResponseBodyWriter
        let guardian: AnswerGuard

        mutating func write(_ buffer: ByteBuffer) async throws {
            try await guardian.writing(buffer) { try await inner.write($0) }
        }

        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
            let guardian = guardian
            let inner = inner
            try await guardian.writing { try await inner.finish(trailingHeaders) }
        }
    }
}
