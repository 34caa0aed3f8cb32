import Crypto
import Foundation
import Hummingbird
import Logging
import NIOCore

/// Per-request state: who the caller is, and which ledger the request is for.
public struct TallyRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The caller, set by `AuthMiddleware`: a token's holder or a signed-in member.
    public var caller: Caller?
    /// The named ledger's tokens and members, set by `AuthMiddleware` (sign-in reads them
    /// without the ledger being opened).
    public var credentials: LedgerCredentials?
    /// Failed sign-ins, slowed (the registry's, set by `AuthMiddleware`).
    public var signIns: SignInThrottle?
    /// The client's address as the node that forwarded this sign-in proved it
    /// (`ForwardedClient`); nil when the request came straight from its client.
    public var forwardedClientAddress: String?
    /// bcrypt's cost for the ledgers served (a sign-in to no ledger does as much work).
    public var passwordCost: UInt8 = 12
    /// The served ledger the request is for, held by it, set by `LedgerMiddleware`
    /// (`service()` reads it).
    public var lease: LedgerLease?
    /// The connection, so a stream can close it when its client stops reading (`AnswerGuard`).
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

/// Knows the caller of every route but the public ones (`/health`, the web app's files,
/// signing in and accepting an invitation): a bearer token of the named ledger, or that
/// ledger's session cookie — whose writes must echo the session's CSRF token in
/// `X-CSRF-Token`. 401 without either; the scope a route needs is checked by the
/// `ScopeMiddleware` of its route group.
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
        var context = context
        context.signIns = registry.signIns
        context.passwordCost = registry.passwordCost
        context.credentials = try registry.credentials(for: request)
        if SessionRoutes.isPublic(request) { return try await next(request, context) }
        context.caller = try Self.caller(request, context.credentials)
        return try await next(request, context)
    }

    /// Whether `given` is `secret`, compared by their SHA-256 digests (in constant time), so the
    /// answer's time tells nothing of how much of it matched.
    static func sameSecret(_ given: String?, _ secret: String) -> Bool {
        guard let given else { return false }
        return SHA256.hash(data: Data(given.utf8)) == SHA256.hash(data: Data(secret.utf8))
    }

    /// The caller a request's bearer token or session cookie names, checked against `credentials`.
    static func caller(_ request: Request, _ credentials: LedgerCredentials?) throws -> Caller {
        if let header = request.headers[.authorization] {
            // The scheme's name is case-insensitive (RFC 9110 §11.1): "bearer" is "Bearer".
            guard header.prefix("Bearer ".count).lowercased() == "bearer " else {
                throw APIError(.unauthorized, "unauthorized", "send 'Authorization: Bearer <token>' (create one with 'tally token create')")
            }
            guard let token = try credentials?.tokens.authenticate(String(header.dropFirst("Bearer ".count))) else {
                throw APIError(.unauthorized, "unauthorized", "unknown or revoked token")
            }
            return .token(token)
        }
        if let secret = SessionCookie.value(in: request) {
            guard let (member, session) = try credentials?.members.session(secret) else {
                throw APIError(.unauthorized, "signed_out", "the session ended (signed out, expired, or the member was removed): sign in again")
            }
            // A write must echo the session's CSRF token, which only the app's own page has
            // read (SameSite=Strict already keeps other sites' requests from carrying the cookie).
            if request.method != .get, request.method != .head, !Self.sameSecret(request.headers[SessionCookie.csrfHeader], session.csrf) {
                throw APIError(.forbidden, "csrf", "a write with a session must send its X-CSRF-Token")
            }
            return .member(member, session)
        }
        throw APIError(.unauthorized, "unauthorized", "sign in, or send 'Authorization: Bearer <token>' (create one with 'tally token create')")
    }
}

/// The scope a route group's routes need (403 otherwise), on the caller `AuthMiddleware` put
/// in the context: `replicate` for the replication routes; for the others `read` to GET or
/// HEAD and `write` for any other method.
struct ScopeMiddleware: RouterMiddleware {
    /// The scope every route of the group needs; nil: `read` or `write` by method.
    let needed: TokenScope?
    /// A signed-in member who may write is let in too: an app's replica of the ledger syncs
    /// with its member's name and password (its vector, pulls, and pushes of the member's own
    /// events: `ReplicationRoutes.admit`).
    var orMemberWhoWrites = false

    /// The server's own syncs with its peers: a replicate token's only.
    static let replicate = ScopeMiddleware(needed: .replicate)
    /// Replication: a replicate token's, or a member's app syncing.
    static let replicateOrMemberWhoWrites = ScopeMiddleware(needed: .replicate, orMemberWhoWrites: true)
    static let readOrWrite = ScopeMiddleware(needed: nil)

    func handle(_ request: Request, context: TallyRequestContext, next: (Request, TallyRequestContext) async throws -> Response) async throws -> Response {
        guard let caller = context.caller else { throw APIError(.unauthorized, "unauthorized", "send 'Authorization: Bearer <token>'") }
        let needed = needed ?? (request.method == .get || request.method == .head ? .read : .write)
        let memberWhoWrites = orMemberWhoWrites && caller.isMember && caller.scopes.contains(.write)
        guard caller.scopes.contains(needed) || memberWhoWrites else {
            throw APIError(.forbidden, "forbidden", "\(caller.description) lacks the '\(needed.rawValue)' scope this route needs")
        }
        return try await next(request, context)
    }
}
