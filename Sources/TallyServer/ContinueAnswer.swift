import Hummingbird
import NIOCore
import NIOHTTPTypes

/// Answers `Expect: 100-continue` with `100 Continue` when the request's head arrives: a client
/// that asks (curl does for a body over 1 MiB) waits to send its body until told to go on — a
/// second for curl, as long as it likes for others — and nothing here told it.
///
/// Only while no other answer is under way on the connection: a `100` written then would land
/// inside that answer. A request pipelined behind another is left to the client's own wait.
/// Nor to a request that carries no credentials at all (no `Authorization`, no cookie): its
/// 401 comes before the body is sent, which is what a client asking first hopes for.
final class ContinueAnswer: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Requests whose head was read, and answers written whole.
    private var requestsRead = 0, answersEnded = 0

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            let isNextToAnswer = requestsRead == answersEnded
            requestsRead += 1
            let carriesCredentials = head.headerFields[.authorization] != nil || head.headerFields[.cookie] != nil
            if isNextToAnswer, carriesCredentials, head.headerFields[.expect]?.lowercased() == "100-continue" {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { answersEnded += 1 }
        context.write(data, promise: promise)
    }
}
