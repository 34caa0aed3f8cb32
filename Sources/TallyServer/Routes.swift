import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
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
    // Every route but `/health` needs a scope: `read` or `write` by method, `replicate` for replication.
    let api = router.group().add(middleware: ScopeMiddleware.readOrWrite)
    func documented(_ group: RouterGroup<TallyRequestContext>, _ path: String) -> APIRoutes { APIRoutes(group: group, documentedPath: path) }
    addLedgerRoutes(
        health: documented(router.group(), ""), hosted: false, api: documented(api, ""),
        v1: documented(api.group("v1").add(middleware: QuotaMiddleware()), "/v1"),
        replication: documented(
            router.group("v1/replication").add(middleware: ScopeMiddleware.replicateOrMemberWhoWrites).add(middleware: QuotaMiddleware()),
            "/v1/replication"),
        serverSync: documented(router.group("v1/replication").add(middleware: ScopeMiddleware.replicate).add(middleware: QuotaMiddleware()), "/v1/replication"),
        people: documented(api.group("v1"), "/v1"), open: documented(router.group("v1"), "/v1"))
    WebAppRoutes().add(to: router)
    routes.fill(from: router)
    return router
}

/// One ledger's operations, written without a router or a ledger: what the OpenAPI document
/// lists. As `tally serve --data-dir` serves them (`/v1/…`, health public), or `hosted` as a
/// hosting server does under the ledger's base URL (`/v1/ledgers/{ledger}/…`: the paths
/// without `/v1`, health behind a token).
func ledgerOperations(hosted: Bool) -> APIBook {
    let book = APIBook()
    func documented(_ path: String) -> APIRoutes { APIRoutes(group: nil, documentedPath: path, book: book) }
    let v1 = hosted ? "" : "/v1"
    addLedgerRoutes(
        health: documented(""), hosted: hosted, api: documented(""), v1: documented(v1), replication: documented(v1 + "/replication"),
        serverSync: documented(v1 + "/replication"),
        people: documented(v1), open: documented(v1))
    return book
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
    // The same operations as one ledger's, under the ledger's path (the document gives one ledger's).
    func documented(_ group: RouterGroup<TallyRequestContext>, _ path: String) -> APIRoutes { APIRoutes(group: group, documentedPath: path) }
    addLedgerRoutes(
        health: documented(api, ""), hosted: true, api: documented(api, ""),
        v1: documented(router.group("v1/ledgers/:ledger").add(middleware: ScopeMiddleware.readOrWrite).add(middleware: QuotaMiddleware()), "/v1"),
        replication: documented(
            router.group("v1/ledgers/:ledger/replication").add(middleware: ScopeMiddleware.replicateOrMemberWhoWrites).add(middleware: QuotaMiddleware()),
            "/v1/replication"),
        serverSync: documented(
            router.group("v1/ledgers/:ledger/replication").add(middleware: ScopeMiddleware.replicate).add(middleware: QuotaMiddleware()),
            "/v1/replication"),
        people: documented(api, "/v1"), open: documented(router.group("v1/ledgers/:ledger"), "/v1"))
    WebAppRoutes().add(to: router)
    routes.fill(from: router)
    return router
}

/// A router with the middleware every request passes, in order: metrics, errors as JSON, a
/// query or transfer coding no route could read as sent refused, the caller's token (checked against the named ledger's tokens), the ledger leased,
/// a large or streamed answer's writes timed, and
/// 405 for a method a path does not serve (from `routes`, filled once every route is added).
private func baseRouter(_ registry: some LedgerRegistry, metrics: Metrics, cluster: ClusterMiddleware? = nil) -> (Router<TallyRequestContext>, RouteTable) {
    let router = Router(context: TallyRequestContext.self, options: .autoGenerateHeadEndpoints)
    router.add(middleware: MetricsMiddleware(metrics: metrics))
    router.add(middleware: ErrorMiddleware())
    router.add(middleware: RequestFormMiddleware())
    // On a cluster, a ledger another node serves is forwarded there before anything else
    // (that node authenticates it), and one nobody serves is taken here first.
    if let cluster { router.add(middleware: cluster) }
    // Authentication first: a client without a valid token learns nothing about a path, not
    // even which methods it serves (401, not 405) — nor, hosted, whether a ledger exists, and
    // no ledger is opened for it.
    router.add(middleware: AuthMiddleware(registry: registry))
    router.add(middleware: LedgerMiddleware(registry: registry))
    router.add(middleware: StalledAnswerMiddleware())  // after the ledger: its body timeout is the deadline
    let routes = RouteTable()
    router.add(middleware: MethodMiddleware(routes: routes))
    return (router, routes)
}

/// One ledger's routes — `hosted`: on a hosting server, under its own base URL — : its health
/// (public where one ledger is served), `/metrics` and
/// `/openapi.yaml` on `api`, the API on `v1` (both scoped `read`/`write` by method; `v1`'s
/// writes held to the ledger's quota), replication on `replication` (scope `replicate`, or a
/// member who writes syncing an app; pushes held to the quota), the server's own syncs with its
/// peers on `serverSync` (scope `replicate` only; held to the quota too), the household's members on `people` (scoped, not counted against
/// the quota of events), and signing in and out on `open` (no scope).
private func addLedgerRoutes(
    health: APIRoutes, hosted: Bool, api: APIRoutes, v1: APIRoutes, replication: APIRoutes, serverSync: APIRoutes, people: APIRoutes,
    open: APIRoutes
) {
    // 200 only when writes can be taken and the views read; otherwise 503 with the reason.
    health.get("health", APIOperation(isPublic: !hosted, responses: [(200, APIResponse.text("The service is up."))], errors: [503])) { _, context in
        try await ledgerHealth(try context.service())
    }
    api.get("metrics", APIOperation(responses: [(200, APIResponse.content("Prometheus metrics.", "text/plain: {}"))], errors: [401])) { _, context in
        let service = try context.service()
        let (appended, projected) = (service.ledger.appendedIndex, try await service.ledger.read { views in try views.projectedIndex() })
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
            body: .init(byteBuffer: ByteBuffer(bytes: service.metrics.render(appendedIndex: appended, projectedIndex: projected))))
    }
    api.get("openapi.yaml", APIOperation(responses: [(200, APIResponse.content("This document.", "application/yaml: {}"))])) { _, _ in
        // Read when asked, not here: the document itself is written by adding these routes.
        let document = hosted ? OpenAPIDocument.hostedYAML : OpenAPIDocument.yaml
        return Response(status: .ok, headers: [.contentType: "application/yaml"], body: .init(byteBuffer: ByteBuffer(string: document)))
    }
    for routes in EntityRoutes.all { routes.add(to: v1) }
    SettingRoutes().add(to: v1)
    QueryRoutes().add(to: v1)
    StatusRoutes().add(to: v1)
    ChangeFeed().add(to: v1)
    AttachmentRoutes().add(to: v1)
    ReplicationRoutes().add(to: replication, serverSync: serverSync)
    AttachmentRoutes().addReplication(to: replication)
    ImportRoutes().add(to: v1)
    SessionRoutes().add(to: people, public: open)
}

/// A ledger's health: 200 only when writes can be taken and the views read; otherwise 503
/// with the reason (a stopped writer needs a restart once its cause — a full disk? — is fixed).
private func ledgerHealth(_ service: TallyService) async throws -> Response {
    let replica: (String, JSONText) = ("replicaId", .string(service.directory.identity.replicaId))
    if let stopped = service.ledger.stoppedBecause {
        return json(
            .object([("status", .string("unhealthy")), replica, ("reason", .string("the log writer stopped: \(stopped)"))]), status: .serviceUnavailable)
    }
    let events: UInt64
    do { events = try await service.ledger.read { views in try views.projectedIndex() } } catch {
        return json(
            .object([("status", .string("unhealthy")), replica, ("reason", .string("the views cannot be read: \(error)"))]), status: .serviceUnavailable)
    }
    let missing = try await service.ledger.read { views in try views.missingAttachments().count }
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
    guard isJSON(request) else {
        throw APIError(.unsupportedMediaType, "unsupported_media_type", "send the body as Content-Type: application/json")
    }
    let tooLarge = APIError(.contentTooLarge, "body_too_large", "the body is larger than \(limit) bytes")
    // A declared length past the limit is refused before a byte is read, not waited for.
    if let declared = declaredLength(request), declared > limit { throw tooLarge }
    let body = request.body
    let buffer = try await withDeadline(timeout) { try await collect(body, upTo: limit, tooLarge: tooLarge) }
    return try StrictJSON.parse(Array(buffer.readableBytesView))
}

/// The body length a request declares (`Content-Length`): `Int.max` for digits past what an
/// `Int` holds (a length all the same, only too long — once taken for none, and waited for).
func declaredLength(_ request: Request) -> Int? {
    guard let text = request.headers[.contentLength] else { return nil }
    if let length = Int(text) { return length }
    return !text.isEmpty && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ? .max : nil
}

/// `body` whole: more than `limit` bytes is `tooLarge`; a body that is not well-formed HTTP (a
/// chunk's framing, a body cut short) is 400 `unreadable_request` — both once read as "too large".
func collect(_ body: RequestBody, upTo limit: Int, tooLarge: APIError) async throws -> ByteBuffer {
    do { return try await body.collect(upTo: limit) } catch is NIOTooManyBytesError { throw tooLarge }
}

/// Whether `request` says its body is JSON (`Content-Type: application/json`, any parameters).
func isJSON(_ request: Request) -> Bool { request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true }

/// What `body` gives (reading a request's body, most often), or a 408 `body_timeout` if it has
/// not finished within `timeout`.
func withDeadline<Value: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> Value) async throws -> Value {
    try await withThrowingTaskGroup(of: Value?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        guard let first else { throw APIError(.requestTimeout, "body_timeout", "the body did not arrive within \(timeout)") }
        return first
    }
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

/// Create, get, update (PATCH: only the given fields) and delete of one kind of entity, each
/// documented from its `EntitySpec`: its `NameCreate` and `NamePatch` schemas, and its view's
/// `Name` where the document has one (`OpenAPIDocument.viewSchemas`).
struct EntityRoutes {
    let type: EntityType
    let path: String
    /// What a create, an update and a delete do, where the fields do not say it all.
    var creating: String? = nil
    var updating: String? = nil
    var deleted = "Deleted."

    /// Every kind of entity the API writes, at its path.
    static let all = [
        EntityRoutes(type: .expense, path: "expenses"),
        EntityRoutes(type: .category, path: "categories"),
        EntityRoutes(type: .todo, path: "todos"),
        EntityRoutes(type: .budget, path: "budgets"),
        EntityRoutes(
            type: .recurring, path: "recurring",
            creating: "Creates a rule; its occurrences up to today become expenses at once (ids derived from the rule and the day).",
            updating: "Changes the rule: occurrences still to come follow it; those already made stay as they are. Setting endDate ends it.",
            deleted: "Deleted (its occurrences stay)."),
        EntityRoutes(
            type: .rule, path: "rules",
            creating:
                "A categorisation rule: an imported row whose payee or memo contains the pattern (or, match=matches, matches it with * and ?) gets its category and tags; the longest matching pattern wins."
        ),
        EntityRoutes(
            type: .rate, path: "rates",
            creating:
                "An exchange rate: one currency is rate toCurrency from date's day on (until a later day's rate of the pair; a pair written the other way round is used inverted). tally rates set keeps one rate per pair and day."
        ),
        EntityRoutes(
            type: .account, path: "accounts",
            creating: "An account: a bank account, a card, cash, savings or a loan, with its opening balance (negative: owed) from its opening day."),
        EntityRoutes(
            type: .transfer, path: "transfers",
            creating:
                "Money moved between two different accounts: not spending (summaries and budgets leave it out). toAmount is what arrives when the accounts' currencies differ."
        ),
        EntityRoutes(type: .settlement, path: "settlements", creating: "Money one person paid another back: settles what they owed."),
        EntityRoutes(
            type: .line, path: "lines",
            creating:
                "One line of a split receipt, on a live expense. A split is better written whole (PUT /v1/expenses/{id}/lines), which checks that it adds up."),
    ]

    /// The entity's schemas' names: `Expense`, `ExpenseCreate`, `ExpensePatch`.
    var schema: String { type.description.prefix(1).uppercased() + type.description.dropFirst() }

    /// An answer of the entity as the views show it, where the document describes that.
    func answer(_ description: String) -> String {
        OpenAPIDocument.viewSchemas.contains(type) ? APIResponse.json(description, schema: schema) : APIResponse.text(description)
    }

    func add(to group: APIRoutes) {
        let (spec, type) = (EntitySpec.of(type), type)
        let create = APIOperation(
            creating,
            parameters: [
                APIParameter.header(
                    "Idempotency-Key",
                    "A retry with the same key returns the entity created the first time (200); while a request with the key is being answered, another gets 409 idempotency_key_in_use; a retry with other values than the first request's gets 422 idempotency_key_reused (its `id` names the entity the key made). A body that names its own id is idempotent by that id instead (a retry: 409 already_exists)."
                )
            ],
            body: APIBody.json(schema + "Create"),
            responses: [(200, answer("Replayed (Idempotency-Key seen before).")), (201, answer("Created (durable)."))], errors: [400, 409, 413, 415, 422])
        group.post(path, create) { request, context in
            let service = try context.service()
            let (id, properties) = try spec.decode(try await jsonBody(request, timeout: service.bodyTimeout))
            let (actor, key) = (actor(context), request.headers[HTTPField.Name("Idempotency-Key")!])
            let (entity, replayed) = try await service.ledger.create(type, id: id, properties, actor: actor, idempotencyKey: key)
            var response = json(entity, status: replayed ? .ok : .created)
            if replayed { response.headers[HTTPField.Name("Idempotent-Replayed")!] = "true" }
            return response
        }
        group.get("\(path)/:id", APIOperation(parameters: [APIParameter.asOf], responses: [(200, answer("The \(type)."))], errors: [400, 404])) {
            request, context in
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
        let update = APIOperation(
            updating, body: APIBody.json(schema + "Patch"), responses: [(200, answer("Updated."))], errors: [400, 404, 409, 413, 415])
        group.patch("\(path)/:id", update) { request, context in
            let service = try context.service()
            let uuid = try uuidParameter(context)
            let (bodyID, properties) = try spec.decode(try await jsonBody(request, timeout: service.bodyTimeout))
            if bodyID != nil { throw ValidationError(field: "id", "an update names its entity in the path only") }
            let actor = actor(context)
            return json(try await service.ledger.update(type, id: uuid, properties, actor: actor))
        }
        group.delete("\(path)/:id", APIOperation(responses: [(204, APIResponse.text(deleted))], errors: [404])) { _, context in
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
    func add(to group: APIRoutes) {
        group.getDocument("settings", APIOperation(parameters: [APIParameter.asOf], responses: [(200, APIResponse.text("Settings: {items}."))], errors: [400]))
        {
            views in try views.settingsDocument()
        }
        let read = APIOperation(parameters: [APIParameter.asOf], responses: [(200, APIResponse.text("The setting."))], errors: [400, 404])
        group.get("settings/:key", read) { request, context in
            let service = try context.service()
            let key = try key(context)
            return try await service.answer(try asOfParameter(request)) { views in
                guard let setting = try views.setting(key) else { throw APIError(.notFound, "not_found", "no setting '\(key)'") }
                return setting
            }
        }
        let body = APIBody.jsonSchema(
            #"{type: object, additionalProperties: false, required: [value], properties: {value: {description: "any JSON value; keys local.… are local-only, all others replicated (a 'scope' field, if sent, must agree)"}, scope: {type: string, enum: [replicated, local]}}}"#
        )
        group.put("settings/:key", APIOperation(body: body, responses: [(200, APIResponse.text("Set."))], errors: [400, 413, 415])) {
            request, context in
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
        group.delete("settings/:key", APIOperation(responses: [(204, APIResponse.text("Deleted."))], errors: [400, 404])) { _, context in
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
