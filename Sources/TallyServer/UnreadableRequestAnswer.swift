import Hummingbird
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Gives the answer to a request that is not HTTP/1.1 at all — a malformed request line or
/// header, a header past the server's limits, TLS spoken to a plain port — the API's JSON error
/// body, like every other error. Such a request never reaches the router: Hummingbird answers
/// it with a bare `400` (`Content-Length: 0`, `Connection: close`) and closes the connection.
///
/// One handler in each connection's pipeline: it notes the parser's error as it passes, and
/// replaces that bare answer's head with the JSON one (431 for a header too large). Any other
/// response passes untouched, so an answer already under way when the error came is left alone.
final class UnreadableRequestAnswer: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// The parser's error, until its answer is written.
    private var parserError: HTTPParserError?
    /// Whether the answer being written is the one replaced: its own empty body is dropped.
    private var replacing = false

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? HTTPParserError { parserError = error }
        context.fireErrorCaught(error)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where parserError != nil && head.status == .badRequest && head.headerFields[.contentLength] == "0":
            let answer = Self.answer(to: parserError!)
            parserError = nil
            replacing = true
            let body = ByteBuffer(string: answer.json)
            var fields = head.headerFields
            fields[.contentType] = "application/json"
            fields[.contentLength] = String(body.readableBytes)
            context.write(wrapOutboundOut(.head(HTTPResponse(status: answer.status, headerFields: fields))), promise: nil)
            context.write(wrapOutboundOut(.body(body)), promise: promise)
        case .body where replacing:
            promise?.succeed()  // the bare answer has none; the JSON went with the head
        case .end:
            replacing = false
            context.write(data, promise: promise)
        default:
            context.write(data, promise: promise)
        }
    }

    /// The API's error for what the parser found.
    static func answer(to error: HTTPParserError) -> APIError {
        switch error {
        case .headerOverflow:
            APIError(.init(code: 431), "header_too_large", "the request's header is larger than this server reads (a line or all of them together)")
        default:
            APIError(.badRequest, "unreadable_request", "the request is not well-formed HTTP/1.1 (\(error)); the connection is closed")
        }
    }
}
