import Foundation
import Hummingbird
import TallyCore

/// Answers 405 with an `Allow` header listing exactly the methods the router serves at a path
/// (`RouteTable`), for any other method on a path it serves; other paths go on (to a 404).
struct MethodMiddleware<Context: RequestContext>: RouterMiddleware {
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let allowed = routes.methods(for: request.uri.path), !allowed.contains(request.method.rawValue) {
            var response = APIError(.methodNotAllowed, "method_not_allowed", "\(request.method.rawValue) is not served at this path").response
            response.headers[.allow] = allowed.joined(separator: ", ")
            return response
        }
        return try await next(request, context)
    }
}
