import Foundation
import HTTPTypes
import Hummingbird
import TallyCore
import TallyLedger
import TallyLog
import TallyStore

/// Builds the router: every route of the API, with auth and error mapping around them, and
/// HEAD answered wherever GET is (RFC 9110: every general-purpose server supports HEAD
/// wherever it supports GET) by Hummingbird's `autoGenerateHeadEndpoints`: the GET's
/// middleware (auth and scope included) and handler run, and the body is dropped.
public func buildRouter(_ service: TallyService) -> Router<TallyRequestContext> {
    buildRouter(SingleLedger(service), metrics: service.metrics)
}

/// The router over the one ledger `registry` serves (`tally serve --data-dir`): the API at
/// `/v1/…`, `/health`, `/metrics`, `/openapi.yaml` and the web app at `/`.
public func buildRouter(_ registry: some LedgerRegistry, metrics: Metrics) -> Router<TallyRequestContext> {
    let (router, routes) = baseRouter(registry, metrics: metrics)
    // 200 only when writes can be taken and the views read; otherwise 503 with the reason.
    router.get("/health") { _, context in try await health(try context.service()) }
    // Every other route needs a scope: `read` or `write` by method, `replicate` for replication.
    let api = router.group().add(middleware: ScopeMiddleware.readOrWrite)
    addLedgerRoutes(
        api: api, v1: api.group("v1").add(middleware: QuotaMiddleware()),
        replication: router.group("v1/replication").add(middleware: ScopeMiddleware.replicate).add(middleware: QuotaMiddleware()),
        people: api.group("v1"), open: router.group("v1"))
    WebAppRoutes().add(to: router)
    routes.fill(from: router)
    return router
}

/// The router over a folder of ledgers (`tally serve --ledgers`): each ledger's API at
/// `/v1/ledgers/{ledger}/…` — the same routes as one ledger's `/v1/…`, with its `health`,
/// `metrics` and `openapi.yaml` beside them — the server's own `/health`, and the web app at
/// `/`, whose sign-in asks for the household as well as the member's name and password.
public func buildHostedRouter(_ ledgers: HostedLedgers, metrics: Metrics) -> Router<TallyRequestContext> {
    let (router, routes) = baseRouter(ledgers, metrics: metrics, cluster: ledgers.cluster.map { ClusterMiddleware(ledgers: ledgers, cluster: $0) })
    router.get("/health") { _, _ in json(.object([("status", .string("ok")), ("openLedgers", .int(Int64(ledgers.openCount)))])) }
    // The server's own metrics, for an operator token (`tally ledgers operator-token`): the
    // credentials `HostedLedgers` gives this path are the operator's, never a ledger's.
    router.group().add(middleware: ScopeMiddleware.readOrWrite).get("metrics") { _, context in
        guard ledgers.areOperators(context.credentials) else { throw APIError(.unauthorized, "unauthorized", "an operator token is needed") }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
            body: .init(byteBuffer: ByteBuffer(bytes: metrics.renderHosting(ledgers.counts()))))
    }
    let api = router.group("v1/ledgers/:ledger").add(middleware: ScopeMiddleware.readOrWrite)
    api.get("health") { _, context in try await health(try context.service()) }
    addLedgerRoutes(
        api: api, v1: router.group("v1/ledgers/:ledger").add(middleware: ScopeMiddleware.readOrWrite).add(middleware: QuotaMiddleware()),
        replication: router.group("v1/ledgers/:ledger/replication").add(middleware: ScopeMiddleware.replicate).add(middleware: QuotaMiddleware()),
        people: api, open: router.group("v1/ledgers/:ledger"))
    WebAppRoutes().add(to: router)
    routes.fill(from: router)
    return router
}

/// A router with the middleware every request passes, in order: metrics, errors as JSON,
/// the caller's token (checked against the named ledger's tokens), the ledger leased, and
/// 405 for a method a path does not serve (from `routes`, filled once every route is added).
private func baseRouter(_ registry: some LedgerRegistry, metrics: Metrics, cluster: ClusterMiddleware? = nil) -> (Router<TallyRequestContext>, RouteTable) {
    let router = Router(context: TallyRequestContext.self, options: .autoGenerateHeadEndpoints)
    router.add(middleware: MetricsMiddleware(metrics: metrics))
    router.add(middleware: ErrorMiddleware())
    // On a cluster, a ledger another node serves is forwarded there before anything else
    // (that node authenticates it), and one nobody serves is taken here first.
    if let cluster { router.add(middleware: cluster) }
    // Authentication first: a client without a valid token learns nothing about a path, not
    // even which methods it serves (401, not 405) — nor, hosted, whether a ledger exists, and
    // no ledger is opened for it.
    router.add(middleware: AuthMiddleware(registry: registry))
    router.add(middleware: LedgerMiddleware(registry: registry))
    let routes = RouteTable()
    router.add(middleware: MethodMiddleware(routes: routes))
    return (router, routes)
}

/// One ledger's routes: `/metrics` and `/openapi.yaml` on `api`, the API on `v1` (both
/// scoped `read`/`write` by method; `v1`'s writes held to the ledger's quota), replication on
/// `replication` (scope `replicate`, pushes held to the quota), the household's members on
/// `people` (scoped, not counted against the quota of events), and signing in and out on
/// `open` (no scope).
private func addLedgerRoutes(
    api: RouterGroup<TallyRequestContext>, v1: RouterGroup<TallyRequestContext>, replication: RouterGroup<TallyRequestContext>,
    people: RouterGroup<TallyRequestContext>, open: RouterGroup<TallyRequestContext>
) {
    api.get("metrics") { _, context in
        let service = try context.service()
        let (appended, projected) = try await service.run { (service.ledger.appendedIndex, try service.views.projectedIndex()) }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
            body: .init(byteBuffer: ByteBuffer(bytes: service.metrics.render(appendedIndex: appended, projectedIndex: projected))))
    }
    api.get("openapi.yaml") { _, _ in
        Response(status: .ok, headers: [.contentType: "application/yaml"], body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.yaml)))
    }
    EntityRoutes(type: .expense, path: "expenses").add(to: v1)
    EntityRoutes(type: .category, path: "categories").add(to: v1)
    EntityRoutes(type: .todo, path: "todos").add(to: v1)
    EntityRoutes(type: .budget, path: "budgets").add(to: v1)
    EntityRoutes(type: .recurring, path: "recurring").add(to: v1)
    EntityRoutes(type: .rule, path: "rules").add(to: v1)
    EntityRoutes(type: .rate, path: "rates").add(to: v1)
    EntityRoutes(type: .account, path: "accounts").add(to: v1)
    EntityRoutes(type: .transfer, path: "transfers").add(to: v1)
    EntityRoutes(type: .settlement, path: "settlements").add(to: v1)
    EntityRoutes(type: .line, path: "lines").add(to: v1)
    SettingRoutes().add(to: v1)
    QueryRoutes().add(to: v1)
    StatusRoutes().add(to: v1)
    ChangeFeed().add(to: v1)
    AttachmentRoutes().add(to: v1)
    ReplicationRoutes().add(to: replication)
    AttachmentRoutes().addReplication(to: replication)
    ImportRoutes().add(to: v1)
    SessionRoutes().add(to: people, public: open)
}

/// A ledger's health: 200 only when writes can be taken and the views read; otherwise 503
/// with the reason (a stopped writer needs a restart once its cause — a full disk? — is fixed).
private func health(_ service: TallyService) async throws -> Response {
    let replica: (String, JSONText) = ("replicaId", .string(service.directory.identity.replicaId))
    if let stopped = service.ledger.stoppedBecause {
        return json(
            .object([("status", .string("unhealthy")), replica, ("reason", .string("the log writer stopped: \(stopped)"))]), status: .serviceUnavailable)
    }
    let events: UInt64
    do { events = try await service.run { try service.views.projectedIndex() } } catch {
        return json(
            .object([("status", .string("unhealthy")), replica, ("reason", .string("the views cannot be read: \(error)"))]), status: .serviceUnavailable)
    }
    let missing = try await service.run { try service.views.missingAttachments().count }
    return json(.object([("status", .string("ok")), replica, ("projectedIndex", .int(Int64(events))), ("missingAttachments", .int(Int64(missing)))]))
}

/// A JSON response.
func json(_ value: JSONText, status: HTTPResponse.Status = .ok) -> Response {
    // Text already serialised (a page of expenses, tens of KiB) is copied once, not re-serialised.
    let bytes = if case .raw(let text) = value { ByteBuffer(string: text) } else { ByteBuffer(bytes: value.utf8) }
    return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: bytes))
}

/// A request's JSON body, read up to `limit` bytes within `timeout` and parsed strictly. The
/// timeout is what stops a client that sends headers and then a trickle of body from holding
/// a connection forever (the server's idle timeout only covers the request head).
func jsonBody(_ request: Request, limit: Int = 1 << 20, timeout: Duration) async throws -> JSONValue {
    guard let type = request.headers[.contentType], type.lowercased().hasPrefix("application/json") else {
        throw APIError(.unsupportedMediaType, "unsupported_media_type", "send the body as Content-Type: application/json")
    }
    let body = request.body
    let buffer: ByteBuffer? = try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
        group.addTask {
            do { return try await body.collect(upTo: limit) } catch {
                throw APIError(.contentTooLarge, "body_too_large", "the body is larger than \(limit) bytes")
            }
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        return first
    }
    guard let buffer else { throw APIError(.requestTimeout, "body_timeout", "the body did not arrive within \(timeout)") }
    return try StrictJSON.parse(Array(buffer.readableBytesView))
}

/// The caller's identity recorded in events: the token's name.
func actor(_ context: TallyRequestContext) -> String { context.caller?.actor ?? "token:unknown" }

/// A path parameter that must be a UUID.
func uuidParameter(_ context: TallyRequestContext) throws -> UUID {
    guard let text = context.parameters.get("id"), let uuid = UUID(uuidString: text) else {
        throw APIError(.badRequest, "invalid_id", "the id in the path must be a UUID")
    }
    return uuid
}

/// Create, get, update (PATCH: only the given fields), delete of expenses, categories, todos.
struct EntityRoutes {
    let type: EntityType
    let path: String

    func add(to group: RouterGroup<TallyRequestContext>) {
        let spec = EntitySpec.of(type)
        group.post(RouterPath(path)) { request, context in
            let service = try context.service()
            let (id, properties) = try spec.decode(try await jsonBody(request, timeout: service.bodyTimeout))
            let (actor, key) = (actor(context), request.headers[HTTPField.Name("Idempotency-Key")!])
            let (entity, replayed) = try await service.ledger.create(type, id: id, properties, actor: actor, idempotencyKey: key)
            var response = json(entity, status: replayed ? .ok : .created)
            if replayed { response.headers[HTTPField.Name("Idempotent-Replayed")!] = "true" }
            return response
        }
        group.get(RouterPath("\(path)/:id")) { request, context in
            let service = try context.service()
            let uuid = try uuidParameter(context)
            if let asOf = try asOfParameter(request) {
                return try await service.answer(asOf) { views in
                    guard let entity = try views.entityJSON(type, id: uuid) else {
                        throw APIError(.notFound, "not_found", "no \(type) with id \(uuid.lowercased)")
                    }
                    return entity
                }
            }
            guard let entity = try service.views.entityJSON(type, id: uuid) else {
                throw APIError(.notFound, "not_found", "no \(type) with id \(uuid.lowercased)")
            }
            return json(entity)
        }
        group.patch(RouterPath("\(path)/:id")) { request, context in
            let service = try context.service()
            let uuid = try uuidParameter(context)
            let (bodyID, properties) = try spec.decode(try await jsonBody(request, timeout: service.bodyTimeout))
            if bodyID != nil { throw ValidationError(field: "id", "an update names its entity in the path only") }
            let actor = actor(context)
            return json(try await service.ledger.update(type, id: uuid, properties, actor: actor))
        }
        group.delete(RouterPath("\(path)/:id")) { _, context in
            let service = try context.service()
            let uuid = try uuidParameter(context)
            let actor = actor(context)
            try await service.ledger.delete(type, id: uuid, actor: actor)
            return Response(status: .noContent)
        }
    }
}

/// Settings by key: PUT {"value": any JSON, "scope": "replicated" | "local"}, GET, DELETE.
/// Keys `local.…` are local-only, every other key replicated; a "scope" must agree with the key.
struct SettingRoutes {
    func add(to group: RouterGroup<TallyRequestContext>) {
        group.getDocument("settings") { views in try views.settingsDocument() }
        group.get("settings/:key") { request, context in
            let service = try context.service()
            let key = try key(context)
            return try await service.answer(try asOfParameter(request)) { views in
                guard let setting = try views.setting(key) else { throw APIError(.notFound, "not_found", "no setting '\(key)'") }
                return setting
            }
        }
        group.put("settings/:key") { request, context in
            let service = try context.service()
            let key = try key(context)
            guard case .object(let fields) = try await jsonBody(request, timeout: service.bodyTimeout) else {
                throw ValidationError(field: nil, "the body must be a JSON object", kind: .malformed)
            }
            var value: JSONValue?
            var isLocal: Bool?  // the key's own scope unless given (and then it must agree)
            for (name, field) in fields {
                switch (name, field) {
                case ("value", _): value = field
                case ("scope", .string("local")): isLocal = true
                case ("scope", .string("replicated")): isLocal = false
                case ("scope", _): throw ValidationError(field: "scope", "must be 'replicated' or 'local'")
                default: throw ValidationError(field: name, "a setting has no field '\(name)'; fields: value, scope", kind: .unknownField)
                }
            }
            guard let text = value?.canonicalText else { throw ValidationError(field: "value", "required") }
            let (actor, local) = (actor(context), isLocal)
            return json(try await service.ledger.setSetting(key, json: text, isLocal: local, actor: actor))
        }
        group.delete("settings/:key") { _, context in
            let service = try context.service()
            let key = try key(context)
            let actor = actor(context)
            try await service.ledger.deleteSetting(key, actor: actor)
            return Response(status: .noContent)
        }
    }

    func key(_ context: TallyRequestContext) throws -> String {
        let key = context.parameters.get("key")?.removingPercentEncoding ?? ""
        try EntitySchema.validateSettingKey(key)
        return key
    }
}
