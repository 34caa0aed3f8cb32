import HTTPTypes
import Hummingbird
import Synchronization
import TallyCore
import TallyLedger

/// One operation of the API as the OpenAPI document describes it. It is given where its route
/// is added (`APIRoutes`), so the document lists the routes there are, and no other.
struct APIOperation: Sendable {
    /// What it does, for a reader of the document.
    var description: String?
    /// Answered without credentials (signing in, accepting an invitation).
    var isPublic = false
    /// Its query and header parameters, each a YAML flow mapping (`APIParameter`). Its path's
    /// parameters come from the path (`OpenAPIDocument.pathParameter`) unless named here.
    var parameters: [String] = []
    var pathParameters: [String: String] = [:]
    /// Its request body, a YAML flow mapping (`APIBody`).
    var requestBody: String?
    /// What it answers, by status, each a YAML flow mapping (`APIResponse`); `errors` are the
    /// statuses answered with the error body. Every operation may also answer an error.
    var responses: [(status: Int, yaml: String)]
    var errors: [Int] = []

    init(
        _ description: String? = nil, isPublic: Bool = false, parameters: [String] = [], pathParameters: [String: String] = [:],
        body: String? = nil, responses: [(Int, String)], errors: [Int] = []
    ) {
        self.description = description
        self.isPublic = isPublic
        self.parameters = parameters
        self.pathParameters = pathParameters
        self.requestBody = body
        self.responses = responses.map { (status: $0.0, yaml: $0.1) }
        self.errors = errors
    }
}

/// Parameters the operations share, as YAML flow mappings.
enum APIParameter {
    static let asOf = ##"{$ref: "#/components/parameters/asOf"}"##
    /// A month, `YYYY-MM`, of the years 0001–9999.
    static let monthSchema = #"{type: string, pattern: "^([0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})-(0[1-9]|1[0-2])$"}"#
    static let month = query("month", schema: monthSchema)
    /// A day (its end) or a date-time, as `AsOf` reads one (`asOf` without its log index).
    static let momentSchema =
        #"{type: string, pattern: "^([0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])(T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?(Z|[+-](0[0-9]|1[0-7]):[0-5][0-9])?)?$"}"#
    /// A real calendar day, `YYYY-MM-DD` (`OpenAPIDocument.dayPattern`).
    static let daySchema = #"{type: string, pattern: "\#(OpenAPIDocument.dayPattern)"}"#
    static let limit = query("limit", schema: "{type: integer, minimum: 1, maximum: \(Limits.maxPageSize)}")

    /// A query parameter.
    static func query(_ name: String, required: Bool = false, _ description: String? = nil, schema: String) -> String {
        "{name: \(name), in: query\(required ? ", required: true" : "")\(description.map { ", description: \(OpenAPIDocument.quoted($0))" } ?? ""), schema: \(schema)}"
    }

    /// A header parameter.
    static func header(_ name: String, _ description: String? = nil) -> String {
        "{name: \(name), in: header, schema: {type: string}\(description.map { ", description: \(OpenAPIDocument.quoted($0))" } ?? "")}"
    }
}

/// Request bodies, as YAML flow mappings.
enum APIBody {
    /// A JSON body of the named component schema.
    static func json(_ schema: String) -> String { jsonSchema(##"{$ref: "#/components/schemas/\##(schema)"}"##) }

    /// A JSON body of the schema written here.
    static func jsonSchema(_ schema: String) -> String { "{required: true, content: {application/json: {schema: \(schema)}}}" }

    /// A body of these media types, as bytes.
    static func bytes(_ types: [String], minLength: Int? = nil) -> String {
        let schema = "{type: string, format: binary\(minLength.map { ", minLength: \($0)" } ?? "")}"
        return "{required: true, content: {\(types.map { "\($0): {schema: \(schema)}" }.joined(separator: ", "))}}"
    }
}

/// Answers, as YAML flow mappings.
enum APIResponse {
    /// An answer described in words (a document whose shape the words give).
    static func text(_ description: String) -> String { "{description: \(OpenAPIDocument.quoted(description))}" }

    /// A JSON answer of the named component schema.
    static func json(_ description: String, schema: String) -> String {
        content(description, ##"application/json: {schema: {$ref: "#/components/schemas/\##(schema)"}}"##)
    }

    /// An answer with these contents (YAML: `type: {schema}` pairs).
    static func content(_ description: String, _ content: String) -> String {
        "{description: \(OpenAPIDocument.quoted(description)), content: {\(content)}}"
    }
}

/// The operations routes were added with, in the order they were added.
final class APIBook: Sendable {
    struct Entry: Sendable {
        /// As the document gives it: `/v1/expenses/{id}`.
        let path: String
        let method: HTTPRequest.Method
        let operation: APIOperation
    }

    private let entries = Mutex<[Entry]>([])

    func add(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    var all: [Entry] { entries.withLock { $0 } }
}

/// A router group whose routes are each added with the operation that documents them: served
/// on `group`, written into `book`. `OpenAPIDocument` learns one ledger's routes by adding them
/// with a book and no group (`ledgerOperations`): the served routes and the documented ones are
/// added by the same code, so they cannot differ.
struct APIRoutes {
    /// Where the routes are served; nil when only the document is being written.
    let group: RouterGroup<TallyRequestContext>?
    /// The path the document gives the group: one ledger's, as `tally serve --data-dir` serves
    /// it (`/v1`), also when a hosting server serves it under `/v1/ledgers/{ledger}`.
    let documentedPath: String
    /// Where the operations are written; nil when the routes are only served.
    var book: APIBook? = nil

    typealias Handler<Output: ResponseGenerator> = @Sendable (Request, TallyRequestContext) async throws -> Output

    func get(_ path: String, _ operation: APIOperation, use handler: @escaping Handler<some ResponseGenerator>) {
        on(path, .get, operation, handler)
    }

    func head(_ path: String, _ operation: APIOperation, use handler: @escaping Handler<some ResponseGenerator>) {
        on(path, .head, operation, handler)
    }

    func post(_ path: String, _ operation: APIOperation, use handler: @escaping Handler<some ResponseGenerator>) {
        on(path, .post, operation, handler)
    }

    func put(_ path: String, _ operation: APIOperation, use handler: @escaping Handler<some ResponseGenerator>) {
        on(path, .put, operation, handler)
    }

    func patch(_ path: String, _ operation: APIOperation, use handler: @escaping Handler<some ResponseGenerator>) {
        on(path, .patch, operation, handler)
    }

    func delete(_ path: String, _ operation: APIOperation, use handler: @escaping Handler<some ResponseGenerator>) {
        on(path, .delete, operation, handler)
    }

    /// A GET answering one of `LedgerViews`' documents, now or as of `?asOf=`.
    func getDocument(_ path: String, _ operation: APIOperation, _ document: @escaping @Sendable (LedgerViews) throws -> JSONText) {
        get(path, operation) { request, context in try await context.service().answer(try asOfParameter(request), document) }
    }

    private func on(_ path: String, _ method: HTTPRequest.Method, _ operation: APIOperation, _ handler: @escaping Handler<some ResponseGenerator>) {
        // The router's `:name` is the document's `{name}`.
        let documented = path.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.joined(separator: "/")
        book?.add(APIBook.Entry(path: documentedPath + "/" + documented, method: method, operation: operation))
        group?.on(RouterPath(path), method: method, use: handler)
    }
}
