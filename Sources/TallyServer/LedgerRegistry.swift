import Hummingbird

/// Which served ledger a request is for. `AuthMiddleware` asks it for the caller's token
/// (checked against that ledger's own tokens, before the ledger is opened), then
/// `LedgerMiddleware` leases the ledger and puts it in the context, where every route takes it
/// from (`context.service()`): no route holds a ledger of its own. One ledger
/// (`SingleLedger`, `tally serve --data-dir`) or a folder of them (`HostedLedgers`,
/// `tally serve --ledgers`) is a registry, not a change to the routes.
public protocol LedgerRegistry: Sendable {
    /// The token of the ledger `request` names whose secret is `secret`; nil when there is
    /// none — also when there is no such ledger, so a stranger cannot tell the two apart.
    /// Throws an `APIError` for a request that names no ledger where one is needed.
    func token(_ secret: String, for request: Request) throws -> TokenRecord?
    /// The ledger `request` names, held until its response is written; nil for a request that
    /// names none (the public paths).
    func lease(for request: Request) async throws -> LedgerLease?
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

    public init(_ service: TallyService) {
        self.service = service
        held = LedgerLease(service) {}
    }

    public func token(_ secret: String, for request: Request) throws -> TokenRecord? { try service.tokens.authenticate(secret) }

    public func lease(for request: Request) async throws -> LedgerLease? { held }
}

/// Leases the request's ledger through the registry and puts it in the context; the response
/// body holds the lease until it is written.
struct LedgerMiddleware<Registry: LedgerRegistry>: RouterMiddleware {
    let registry: Registry

    func handle(_ request: Request, context: TallyRequestContext, next: (Request, TallyRequestContext) async throws -> Response) async throws -> Response {
        guard let lease = try await registry.lease(for: request) else { return try await next(request, context) }
        var context = context
        context.lease = lease
        var response = try await next(request, context)
        let body = response.body
        response.body = ResponseBody(contentLength: body.contentLength) { writer in
            try await body.write(writer)
            withExtendedLifetime(lease) {}
        }
        return response
    }
}
