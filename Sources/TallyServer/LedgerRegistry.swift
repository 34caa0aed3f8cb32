import Hummingbird

/// Which served ledger a request is for. `AuthMiddleware` asks it for that ledger's
/// credentials (its tokens and members, read before the ledger is opened) to know the caller,
/// then `LedgerMiddleware` leases the ledger and puts it in the context, where every route
/// takes it from (`context.service()`): no route holds a ledger of its own. One ledger
/// (`SingleLedger`, `tally serve --data-dir`) or a folder of them (`HostedLedgers`,
/// `tally serve --ledgers`) is a registry, not a change to the routes.
public protocol LedgerRegistry: Sendable {
    /// The tokens and members of the ledger `request` names; nil when there is no such
    /// ledger (a caller is then refused as with a wrong secret, so a stranger cannot tell the
    /// two apart). Throws an `APIError` for a request that names no ledger where one is needed.
    func credentials(for request: Request) throws -> LedgerCredentials?
    /// The ledger `request` names, held until its response is written; nil for a request that
    /// names none, or (hosted) whose caller is not known: a stranger's request opens nothing.
    func lease(for request: Request, authenticated: Bool) async throws -> LedgerLease?
    /// Failed sign-ins, slowed per account and per address, across every ledger served.
    var signIns: SignInThrottle { get }
    /// bcrypt's cost for members' passwords (a sign-in to a ledger that does not exist does
    /// as much work as one to a ledger that does).
    var passwordCost: UInt8 { get }
}

/// Who may use one ledger: its API tokens and its members (with their sessions and
/// invitations), each read from the ledger's folder.
public struct LedgerCredentials: Sendable {
    public let tokens: TokenStore
    public let members: MemberStore
    /// Where the ledger's API is (`/v1` or `/v1/ledgers/NAME`): a session cookie's path.
    public let apiPath: String
    /// Called after a change to them (a sign-in, an invitation, a member removed) before it is
    /// answered: on a cluster, the changed files are stored in PostgreSQL (`HostedLedgers`).
    var afterChange: (@Sendable () async throws -> Void)? = nil
}

/// A served ledger held by a request: it is not closed while a lease on it lives. The lease
/// is let go when it is freed — with the response body that captured it, however that body
/// ends (written, failed, or dropped unwritten as a HEAD's is).
public final class LedgerLease: Sendable {
    public let service: TallyService
    private let release: @Sendable () -> Void

    init(_ service: TallyService, release: @escaping @Sendable () -> Void) {
        self.service = service
        self.release = release
    }

    deinit { release() }
}

/// One ledger for every request: `tally serve --data-dir`.
public struct SingleLedger: LedgerRegistry {
    public let service: TallyService
    /// Held for the server's lifetime: the one ledger is never closed under a request.
    private let held: LedgerLease

    public let signIns = SignInThrottle()
    private let credentials: LedgerCredentials

    public init(_ service: TallyService) {
        self.service = service
        held = LedgerLease(service) {}
        credentials = LedgerCredentials(tokens: service.tokens, members: service.members, apiPath: "/v1")
    }

    public func credentials(for request: Request) throws -> LedgerCredentials? { credentials }

    public var passwordCost: UInt8 { service.members.cost }

    public func lease(for request: Request, authenticated: Bool) async throws -> LedgerLease? { held }
}

/// Leases the request's ledger through the registry and puts it in the context; the response
/// body holds the lease until it is written.
struct LedgerMiddleware<Registry: LedgerRegistry>: RouterMiddleware {
    let registry: Registry

    func handle(_ request: Request, context: TallyRequestContext, next: (Request, TallyRequestContext) async throws -> Response) async throws -> Response {
        guard let lease = try await registry.lease(for: request, authenticated: context.caller != nil) else { return try await next(request, context) }
        var context = context
        context.lease = lease
        return try await next(request, context).holding(lease)
    }
}

extension Response {
    /// This response, its body holding `lease` until it is written (or dropped unwritten):
    /// the ledger is not closed under a stream or a download.
    func holding(_ lease: LedgerLease) -> Response {
        var response = self
        let body = response.body
        response.body = ResponseBody(contentLength: body.contentLength) { writer in
            try await body.write(writer)
            withExtendedLifetime(lease) {}
        }
        return response
    }
}
