import Hummingbird
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Closes a connection once an answer is written, when nothing more will be read on it or
/// should be:
/// - its request asked to leave HTTP: a `CONNECT` (nothing here is a proxy), or one with an
///   `Upgrade` header. NIO's parser reads nothing after such a request, and sends any answer
///   to a CONNECT without a body or length: the client, and any request pipelined behind it,
///   waited for the idle timeout;
/// - its body was still arriving when the answer began (a route that refused it unread: a 401,
///   a 413, a 429). Hummingbird drains the rest without a deadline and each piece resets the
///   idle timer, so a client trickling a body no route reads held the connection as long as it
///   liked;
/// - its request asked to close in other than lower case (`Connection: Close`), which
///   Hummingbird's own check misses, or is HTTP/1.0 without `Connection: keep-alive` (closed
///   by default, which Hummingbird cannot tell: the version is dropped with the head's
///   conversion to HTTPTypes, so `KeepAliveNote` reads it just before).
///
/// That answer gets `Connection: close`, and the connection closes once every write up to its
/// end is flushed — for a body still arriving, only its sending side at first: the rest of the
/// body is read for up to `drainLimit` more before the whole connection closes, since closing
/// on unread bytes makes the kernel reset the connection, and a client still sending (Python's
/// `http.client` with a refused upload) would get the reset instead of the answer (found by a
/// hostile run of the first version). Hummingbird answers a connection's requests one at a
/// time, in order, so an answer is matched to its request by count.
final class ClosingAfterAnswer: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Requests whose head was read, those whose body has ended, and answers written whole.
    private var requestsRead = 0, requestsEnded = 0, answersEnded = 0
    /// The first request after which nothing more is read (counted from 0).
    private var lastRequest: Int?
    /// Whether the answer being written closes the connection.
    private var closing = false
    /// Whether the request head arriving next is not to keep its connection alive (`KeepAliveNote`).
    fileprivate var nextRequestEndsTheConnection = false

    func handlerAdded(context: ChannelHandlerContext) {
        guard let codec = try? context.pipeline.syncOperations.handler(type: HTTP1ToHTTPServerCodec.self) else { return }
        try? context.pipeline.syncOperations.addHandler(KeepAliveNote(closing: self), position: .before(codec))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if lastRequest == nil, nextRequestEndsTheConnection || Self.endsTheConnection(head) { lastRequest = requestsRead }
            nextRequestEndsTheConnection = false
            requestsRead += 1
        case .end: requestsEnded += 1
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status.kind != .informational:
            // This is the answer to request number `answersEnded`.
            guard answersEnded == lastRequest || requestsEnded <= answersEnded else { return context.write(data, promise: promise) }
            closing = true
            head.headerFields[.connection] = "close"
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end:
            answersEnded += 1
            guard closing else { return context.write(data, promise: promise) }
            closing = false
            let bodyStillArriving = requestsEnded < answersEnded
            let connection = NIOLoopBound(context, eventLoop: context.eventLoop)
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.whenComplete { _ in
                guard bodyStillArriving else { return connection.value.close(promise: nil) }
                connection.value.close(mode: .output, promise: nil)
                connection.value.eventLoop.scheduleTask(in: Self.drainLimit) { connection.value.close(promise: nil) }
            }
            if let promise { written.futureResult.cascade(to: promise) }
            context.writeAndFlush(data, promise: written)
        case .head, .body:
            context.write(data, promise: promise)
        }
    }

    /// How long the rest of a body no route reads is read (and dropped) after its answer.
    static let drainLimit = TimeAmount.seconds(30)

    /// Whether nothing should be read after `head`'s request: it leaves HTTP, or asks to close.
    static func endsTheConnection(_ head: HTTPRequest) -> Bool {
        head.method == .connect || head.headerFields[.upgrade] != nil
            || head.headerFields[values: .connection].contains {
                $0.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "close" }
            }
    }
}

/// Reads, before `HTTP1ToHTTPServerCodec` turns a request's head into HTTPTypes' (which have no
/// version), whether it keeps its connection alive — HTTP/1.0 does only when it says
/// `Connection: keep-alive` — and tells `ClosingAfterAnswer`, next in line, when it does not.
private final class KeepAliveNote: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    let closing: ClosingAfterAnswer

    init(closing: ClosingAfterAnswer) { self.closing = closing }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data), !head.isKeepAlive { closing.nextRequestEndsTheConnection = true }
        context.fireChannelRead(data)
    }
}
