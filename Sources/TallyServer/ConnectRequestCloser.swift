import Hummingbird
import NIOCore
import NIOHTTPTypes

/// Closes the connection once a `CONNECT` is answered. Nothing here is a proxy, so the answer
/// is an error — but NIO's encoder sends any answer to a `CONNECT` without a body or a length
/// (a 2xx one would open a tunnel), and its parser reads nothing after a `CONNECT`: the client
/// would wait for the rest of the answer, and a request pipelined behind it for its own, until
/// the idle timeout. With `Connection: close` the answer ends where the connection does.
final class ConnectRequestCloser: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var answeringConnect = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data), head.method == .connect { answeringConnect = true }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard answeringConnect else { return context.write(data, promise: promise) }
        switch unwrapOutboundIn(data) {
        case .head(var head):
            head.headerFields[.connection] = "close"
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end:
            answeringConnect = false
            context.writeAndFlush(data, promise: promise)
            context.close(promise: nil)
        case .body:
            context.write(data, promise: promise)
        }
    }
}
