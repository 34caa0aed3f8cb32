import Hummingbird

/// Which served ledger a request is for. Each request's ledger is resolved once, by
/// `LedgerMiddleware`, and put in its context, where every route takes it from
/// (`context.service()`): no route holds a ledger of its own, so serving many (issue 31) is a
/// registry that resolves them by name, not a change to the routes.
public protocol LedgerRegistry: Sendable {
    /// The served ledger `request` is for; throws an `APIError` when there is none.
    func service(for request: Request) async throws -> TallyService
}

/// One ledger for every request: `tally serve --data-dir`.
public struct SingleLedger: LedgerRegistry {
    public let service: TallyService

    public init(_ service: TallyService) { self.service = service }

    public func service(for request: Request) async throws -> TallyService { service }
}

/// Resolves the request's ledger through the registry and puts it in the context.
struct LedgerMiddleware<Registry: LedgerRegistry>: RouterMiddleware {
    let registry: Registry

    func handle(_ request: Request, context: TallyRequestContext, next: (Request, TallyRequestContext) async throws -> Response) async throws -> Response {
        var context = context
        context.served = try await registry.service(for: request)
        return try await next(request, context)
    }
}
