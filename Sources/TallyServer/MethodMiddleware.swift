import Foundation
import Hummingbird
import TallyCore

/// Answers 405 with an `Allow` header listing exactly the methods the router serves at a path
/// (`RouteTable`), for any other method on a path it serves; other paths stay 404s. It looks
/// only at what the router could not match (its `NotFoundResponder` throws `HTTPError(.notFound)`;
/// routes throw `APIError`), so a matched request costs nothing here.
struct MethodMiddleware<Context: RequestContext>: RouterMiddleware {
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            guard let allowed = routes.methods(for: request.uri.path), !allowed.contains(request.method.rawValue) else { throw error }
            var response = APIError(.methodNotAllowed, "method_not_allowed", "\(request.method.rawValue) is not served at this path").response
            response.headers[.allow] = allowed.joined(separator: ", ")
            return response
        }
    }
}
