import Foundation
import Hummingbird
import TallyCore
import TallyLedger

/// Turns every thrown error into the API's JSON error (no request can get a bare 500 page).
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do { return try await next(request, context) } catch {
            if case LedgerError.viewsBehind(let id, _) = error {
                // Written, durably: 202 with what was written, never an error a client would retry.
                context.logger.warning("write durable but views behind", metadata: ["entity.id": "\(id)", "error": "\(error)"])
                return Response(
                    status: .accepted, headers: [.contentType: "application/json"],
                    body: .init(
                        byteBuffer: ByteBuffer(
                            string: JSONText.object([
                                ("id", .string(id)), ("written", .bool(true)), ("viewsBehind", .bool(true)), ("message", .string("\(error)")),
                            ]).serialized)))
            }
            let answer = APIError.from(error)
            // A 500 is a broken invariant, never the client's doing: the cause goes to the log
            // (the client gets the message, not a stack).
            if answer.status == .internalServerError {
                context.logger.error("request failed", metadata: ["http.path": "\(request.uri.path)", "error.code": "\(answer.code)", "error": "\(error)"])
            }
            return answer.response
        }
    }
}
