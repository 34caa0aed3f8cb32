import Hummingbird
import Logging
import NIOCore

/// Per-request state: who the bearer token says the caller is.
public struct TallyRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The authenticated token, set by `AuthMiddleware`.
    public var token: TokenRecord?
    /// The served ledger the request is for, held by it, set by `LedgerMiddleware`
    /// (`service()` reads it).
    public var lease: LedgerLease?
    /// The connection, so a stream can close it when its client stops reading (`FeedGuard`).
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// Bodies are read with explicit limits per route (entities vs segment pushes).
    public var maxUploadSize: Int { 64 << 20 }

    /// The served ledger the request is for (`LedgerMiddleware` runs before every route).
    func service() throws -> TallyService {
        guard let lease else { throw APIError(.internalServerError, "internal", "no ledger was resolved for this request") }
        return lease.service
    }
}

/// Requires a bearer token on every route but `/health` and the web app's files (401 without
/// or with an unknown one) and puts it in the context; the scope a route needs is checked by
/// the `ScopeMiddleware` of its route group.
struct AuthMiddleware<Registry: LedgerRegistry>: RouterMiddleware {
    let registry: Registry

    func handle(_ request: Request, context: TallyRequestContext, next: (Request, TallyRequestContext) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        // The router ignores empty segments, so "/v1//replication/push" would reach the push
        // route: no route of this API has one, and such paths are refused before anything else.
        if path.contains("//") { throw APIError(.badRequest, "invalid_path", "the path has an empty segment ('//')") }
        // Likewise a percent-encoded path ("/v1/%72eplication/push"): no route of this API needs
        // one (ids and setting keys are plain ASCII), and the router may decode what this check sees raw.
        if path.contains("%") { throw APIError(.badRequest, "invalid_path", "the path is percent-encoded; no route of this API needs it") }
        // "/health/" is the same route to the router ("/health").
        if path == "/health" || path == "/health/" || WebAppRoutes.isPublic(path) { return try await next(request, context) }
        // The scheme's name is case-insensitive (RFC 9110 §11.1): "bearer" is "Bearer".
        guard let header = request.headers[.authorization], header.prefix("Bearer ".count).lowercased() == "bearer " else {
            throw APIError(.unauthorized, "unauthorized", "send 'Authorization: Bearer <token>' (create one with 'tally token create')")
        }
        guard let token = try registry.token(String(header.dropFirst("Bearer ".count)), for: request) else {
            throw APIError(.unauthorized, "unauthorized", "unknown or revoked token")
        }
        var context = context
        context.token = token
        return try await next(request, context)
    }
}

/// The scope a route group's routes need (403 otherwise), on the token `AuthMiddleware` put
/// in the context: `replicate` for the replication routes; for the others `read` to GET or
/// HEAD and `write` for any other method.
struct ScopeMiddleware: RouterMiddleware {
    /// The scope every route of the group needs; nil: `read` or `write` by method.
    let needed: TokenScope?

    static let replicate = ScopeMiddleware(needed: .replicate)
    static let readOrWrite = ScopeMiddleware(needed: nil)

    func handle(_ request: Request, context: TallyRequestContext, next: (Request, TallyRequestContext) async throws -> Response) async throws -> Response {
        guard let token = context.token else { throw APIError(.unauthorized, "unauthorized", "send 'Authorization: Bearer <token>'") }
        let needed = needed ?? (request.method == .get || request.method == .head ? .read : .write)
        guard token.scopes.contains(needed) else {
            throw APIError(.forbidden, "forbidden", "token '\(token.name)' lacks the '\(needed.rawValue)' scope this route needs")
        }
        return try await next(request, context)
    }
}
