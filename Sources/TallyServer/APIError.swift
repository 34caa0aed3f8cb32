import Foundation
import Hummingbird
import TallyCore
import TallyLog
import TallySync

/// An error the API answers with `{"error": {"code": …, "message": …}}` and its status.
/// Every other error type is mapped here, in one place.
public struct APIError: Error, Sendable {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        (self.status, self.code, self.message) = (status, code, message)
    }

    /// The API's answer to any error thrown while handling a request.
    static func from(_ error: any Error) -> APIError {
        switch error {
        case let error as APIError: return error
        case let error as ValidationError:
            if error.field == "id", error.message.hasPrefix("no ") { return APIError(.notFound, "not_found", error.message) }
            if error.field == "id" { return APIError(.conflict, "already_exists", error.message) }
            return APIError(.badRequest, "invalid_field", error.description)
        case let error as StrictJSONError: return APIError(.badRequest, "malformed_json", "the body is not valid JSON: \(error)")
        case let error as SyncRejection: return APIError(.unprocessableContent, "rejected", error.description)
        case let error as LogError:
            switch error {
            case .writerStopped, .io: return APIError(.serviceUnavailable, error.code, error.description)
            case .rejected: return APIError(.badRequest, error.code, error.description)
            default: return APIError(.internalServerError, error.code, error.description)
            }
        case let error as HTTPError:
            let status = error.status
            let code = status == .contentTooLarge ? "body_too_large" : status == .notFound ? "not_found" : "http_\(status.code)"
            return APIError(status, code, error.body ?? status.reasonPhrase)
        default: return APIError(.internalServerError, "internal", "unexpected error: \(error)")
        }
    }

    /// The JSON response.
    var response: Response {
        let body = JSONText.object([("error", .object([("code", .string(code)), ("message", .string(message))]))]).serialized
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}

/// Turns every thrown error into the API's JSON error (no request can get a bare 500 page).
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do { return try await next(request, context) } catch { return APIError.from(error).response }
    }
}

/// Methods the API never serves (TRACE, CONNECT, …) get 405 rather than 404.
struct MethodMiddleware<Context: RequestContext>: RouterMiddleware {
    static var served: Set<HTTPRequest.Method> { [.get, .head, .post, .put, .patch, .delete] }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard Self.served.contains(request.method) else {
            var response = APIError(.methodNotAllowed, "method_not_allowed", "\(request.method) is not served here").response
            response.headers[.allow] = "GET, HEAD, POST, PUT, PATCH, DELETE"
            return response
        }
        return try await next(request, context)
    }
}
