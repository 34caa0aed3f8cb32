import Foundation
import HTTPTypes
import Hummingbird
import TallyCore
import TallyLog
import TallyStore

/// Builds the router: every route of the API, with auth and error mapping around them.
public func buildRouter(_ service: TallyService) -> Router<TallyRequestContext> {
    let router = Router(context: TallyRequestContext.self)
    router.add(middleware: MetricsMiddleware(metrics: service.metrics))
    router.add(middleware: ErrorMiddleware())
    router.add(middleware: MethodMiddleware())
    router.add(middleware: AuthMiddleware(tokens: service.tokens))

    router.get("/health") { _, _ in
        let events = try await service.run { try service.projector.checkpoint() }
        return json(.object([("status", .string("ok")), ("replicaId", .string(service.directory.identity.replicaId)),
                             ("projectedIndex", .int(Int64(events)))]))
    }
    router.get("/metrics") { _, _ in
        let (appended, projected) = try await service.run { (service.writer.head.lastIndex, try service.projector.checkpoint()) }
        return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                        body: .init(byteBuffer: ByteBuffer(string: service.metrics.render(appendedIndex: appended, projectedIndex: projected))))
    }
    router.get("/openapi.yaml") { _, _ in
        Response(status: .ok, headers: [.contentType: "application/yaml"], body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.yaml)))
    }

    let v1 = router.group("v1")
    EntityRoutes(service: service, type: .expense, path: "expenses").add(to: v1)
    EntityRoutes(service: service, type: .category, path: "categories").add(to: v1)
    EntityRoutes(service: service, type: .todo, path: "todos").add(to: v1)
    SettingRoutes(service: service).add(to: v1)
    QueryRoutes(service: service).add(to: v1)
    ChangeFeed(service: service).add(to: v1)
    ReplicationRoutes(service: service).add(to: v1)
    return router
}

/// A JSON response.
func json(_ value: JSONText, status: HTTPResponse.Status = .ok) -> Response {
    Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: value.serialized)))
}

/// A request's JSON body, read up to `limit` bytes and parsed strictly.
func jsonBody(_ request: Request, limit: Int = 1 << 20) async throws -> JSONValue {
    guard let type = request.headers[.contentType], type.lowercased().hasPrefix("application/json") else {
        throw APIError(.unsupportedMediaType, "unsupported_media_type", "send the body as Content-Type: application/json")
    }
    let buffer: ByteBuffer
    do { buffer = try await request.body.collect(upTo: limit) } catch {
        throw APIError(.contentTooLarge, "body_too_large", "the body is larger than \(limit) bytes")
    }
    return try StrictJSON.parse(Array(buffer.readableBytesView))
}

/// The caller's identity recorded in events: the token's name.
func actor(_ context: TallyRequestContext) -> String { "token:" + (context.token?.name ?? "unknown") }

/// Create, get, update (PATCH: only the given fields), delete of expenses, categories, todos.
struct EntityRoutes {
    let service: TallyService
    let type: EntityType
    let path: String

    func add(to group: RouterGroup<TallyRequestContext>) {
        group.post(RouterPath(path)) { request, context in
            let (id, properties) = try EntityInput.parse(try await jsonBody(request), for: type)
            let actor = actor(context)
            // With an Idempotency-Key, the id derives from the token and the key: a retry after a
            // timeout names the same entity, finds it created, and gets it back instead of a duplicate.
            let key = request.headers[HTTPField.Name("Idempotency-Key")!]
            let uuid = id ?? key.map { IdempotencyKey.entityID(actor: actor, key: $0, type: type) } ?? UUID()
            if key != nil, try await service.projector.database.read({ try ProjectionLookup($0).entity(.uuid(uuid)) }) != nil {
                var replay = try await view(uuid.lowercased, status: .ok)
                replay.headers[HTTPField.Name("Idempotent-Replayed")!] = "true"
                return replay
            }
            _ = try await service.run {
                try service.session.write(actor: actor) { _, currency in
                    let defaults = EntitySchema.defaults(for: type, defaultCurrency: currency, now: .nowHere)
                    return EventDraft(entityType: type, entityID: .uuid(uuid), operation: .create, properties: defaults.overlaid(with: properties), actor: actor)
                }
            }
            return try await view(uuid.lowercased, status: .created)
        }
        group.get(RouterPath("\(path)/:id")) { _, context in
            try await view(try id(context).lowercased, status: .ok)
        }
        group.patch(RouterPath("\(path)/:id")) { request, context in
            let uuid = try id(context)
            let (bodyID, properties) = try EntityInput.parse(try await jsonBody(request), for: type)
            if bodyID != nil { throw APIError(.badRequest, "invalid_field", "invalid id: an update names its entity in the path only") }
            let actor = actor(context)
            _ = try await service.run {
                try service.session.write(actor: actor) { _, _ in
                    EventDraft(entityType: type, entityID: .uuid(uuid), operation: .update, properties: properties, actor: actor)
                }
            }
            return try await view(uuid.lowercased, status: .ok)
        }
        group.delete(RouterPath("\(path)/:id")) { _, context in
            let uuid = try id(context)
            let actor = actor(context)
            _ = try await service.run {
                try service.session.write(actor: actor) { _, _ in EventDraft(entityType: type, entityID: .uuid(uuid), operation: .delete, actor: actor) }
            }
            return Response(status: .noContent)
        }
    }

    func id(_ context: TallyRequestContext) throws -> UUID {
        guard let text = context.parameters.get("id"), let uuid = UUID(uuidString: text) else {
            throw APIError(.badRequest, "invalid_id", "the id in the path must be a UUID")
        }
        return uuid
    }

    /// The entity as the views show it.
    func view(_ id: String, status: HTTPResponse.Status) async throws -> Response {
        guard let body = try viewBody(id) else { throw APIError(.notFound, "not_found", "no \(type) with id \(id)") }
        return json(body, status: status)
    }

    /// Reads synchronously: a primary-key read takes microseconds, about what a hop to GRDB's
    /// reader queue and back costs (`scripts/bench http` showed no loss either way).
    ///
    /// An expense or a to-do is one SELECT, which SQLite answers from one snapshot by itself,
    /// so it runs without the transaction GRDB's `read` wraps around every read (a savepoint
    /// and `query_only` switched on and off: four more statements per request, most of the
    /// read's cost). A category takes two SELECTs (its merge, then the winner), so it keeps
    /// the transaction, and both see the same views.
    func viewBody(_ id: String) throws -> JSONText? {
        let views = service.projector.database
        switch type {
        case .expense: return try views.unsafeRead { try ProjectionQueries.expense($0, id: id).map(ViewJSON.expense) }
        case .todo: return try views.unsafeRead { try ProjectionQueries.todo($0, id: id).map(ViewJSON.todo) }
        case .category: return try views.read { try ProjectionQueries.category($0, id: id).map { ViewJSON.category($0, depth: 0) } }
        case .setting: return nil
        }
    }
}

/// Settings by key: PUT {"value": any JSON, "scope": "replicated" | "local"}, GET, DELETE.
struct SettingRoutes {
    let service: TallyService

    func add(to group: RouterGroup<TallyRequestContext>) {
        group.get("settings") { _, _ in
            let rows = try await service.projector.database.read { try ProjectionQueries.settings($0) }
            return json(.object([("items", .array(rows.map(ViewJSON.setting)))]))
        }
        group.get("settings/:key") { _, context in
            let key = try key(context)
            guard let row = try await service.projector.database.read({ try ProjectionQueries.setting($0, key: key) }) else {
                throw APIError(.notFound, "not_found", "no setting '\(key)'")
            }
            return json(ViewJSON.setting(row))
        }
        group.put("settings/:key") { request, context in
            let key = try key(context)
            guard case .object(let fields) = try await jsonBody(request) else { throw APIError(.badRequest, "invalid_body", "the body must be a JSON object") }
            var value: JSONValue?
            var local = false
            for (name, field) in fields {
                switch (name, field) {
                case ("value", _): value = field
                case ("scope", .string("local")): local = true
                case ("scope", .string("replicated")): local = false
                case ("scope", _): throw EntityInput.invalid("scope", "must be 'replicated' or 'local'")
                default: throw APIError(.badRequest, "unknown_field", "a setting has no field '\(name)'; fields: value, scope")
                }
            }
            guard let value else { throw EntityInput.invalid("value", "required") }
            let actor = actor(context)
            let isLocal = local
            _ = try await service.run {
                try service.session.write(actor: actor) { state, _ in
                    let exists = try state.live(.settingKey(key)) != nil
                    return EventDraft(entityType: .setting, entityID: .settingKey(key), operation: exists ? .update : .create,
                                      properties: [.value: .json(value.canonicalText)], actor: actor, isLocalOnly: isLocal)
                }
            }
            guard let row = try await service.projector.database.read({ try ProjectionQueries.setting($0, key: key) }) else {
                throw APIError(.internalServerError, "internal", "the setting was written but is not in the views")
            }
            return json(ViewJSON.setting(row))
        }
        group.delete("settings/:key") { _, context in
            let key = try key(context)
            let actor = actor(context)
            _ = try await service.run {
                try service.session.write(actor: actor) { state, _ in
                    EventDraft(entityType: .setting, entityID: .settingKey(key), operation: .delete, actor: actor,
                               isLocalOnly: try state.live(.settingKey(key))?.isLocalOnly ?? false)
                }
            }
            return Response(status: .noContent)
        }
    }

    func key(_ context: TallyRequestContext) throws -> String {
        let key = context.parameters.get("key")?.removingPercentEncoding ?? ""
        try EntitySchema.validateSettingKey(key)
        return key
    }
}

extension DateTime {
    /// The current time in this machine's UTC offset.
    static var nowHere: DateTime {
        let date = Date()
        return DateTime(epochMillis: Int64((date.timeIntervalSince1970 * 1000).rounded(.down)),
                        offsetMinutes: Int16(TimeZone.current.secondsFromGMT(for: date) / 60))
    }
}
