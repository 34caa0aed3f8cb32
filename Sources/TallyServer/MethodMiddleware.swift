import Foundation
import Hummingbird
import TallyCore
import TallyLedger

/// Answers 405 with an `Allow` header listing exactly the methods the OpenAPI document gives a
/// path, for any other method on a documented path; other paths go on (to a 404).
struct MethodMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let allowed = DocumentedRoutes.methods(for: request.uri.path) {
            let method = request.method.rawValue
            if !allowed.contains(method), !(method == "HEAD" && allowed.contains("GET")) {
                var response = APIError(.methodNotAllowed, "method_not_allowed", "\(method) is not served at this path").response
                response.headers[.allow] = allowed.joined(separator: ", ")
                return response
            }
        }
        return try await next(request, context)
    }
}
