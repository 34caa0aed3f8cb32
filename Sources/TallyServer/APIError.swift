import Foundation
import Hummingbird
import NIOHTTP1
import TallyCore
import TallyImport
import TallyLedger
import TallyLog
import TallySync

/// An error the API answers with `{"error": {"code": …, "message": …, "field": …}}` and its
/// status (`field`, the request field at fault, only when there is one: a form shows the
/// message beside it). Every other error type is mapped here, in one place.
public struct APIError: Error, Sendable {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String
    public var field: String?
    /// The rows of a statement that could not be read (`bad_rows`), each {sheet, row, reason}.
    public var rows: [JSONText]?
    /// Seconds to wait before trying again (`Retry-After`), for a 429.
    public var retryAfter: Int?
    /// The most characters of a message or field an answer carries.
    static let maxQuoted = 1_000
    /// The origin whose chain the request's events fork (`forked_chain`): the sender may be a
    /// restored copy of that replica, which then takes a new identity (docs/TALLYKIT.md).
    public var forkedOrigin: String?
    /// The entity the error is about, when the client may go on with it (`idempotency_key_reused`:
    /// the one the key made, which an update can change).
    public var entityId: String?

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String, field: String? = nil, rows: [JSONText]? = nil) {
        (self.status, self.code, self.message, self.field, self.rows) = (status, code, message, field, rows)
    }

    /// The API's answer to any error thrown while handling a request.
    static func from(_ error: any Error) -> APIError {
        switch error {
        case let error as APIError: return error
        case let error as HTTPParserError:  // a body's framing (Hummingbird answers a bad head itself: UnreadableRequestAnswer)
            return UnreadableRequestAnswer.answer(to: error)
        case let error as ValidationError:
            var answer: APIError
            switch error.kind {
            case .invalid: answer = APIError(.badRequest, "invalid_field", error.description)
            case .unknownField: answer = APIError(.badRequest, "unknown_field", error.message)
            case .malformed: answer = APIError(.badRequest, "invalid_body", error.message)
            case .notFound: answer = APIError(.notFound, "not_found", error.message)
            case .alreadyExists: answer = APIError(.conflict, "already_exists", error.message)
            case .conflictsWithState: answer = APIError(.conflict, "conflicts_with_state", error.description)
            }
            answer.field = error.field
            return answer
        case let error as LedgerError:
            switch error {
            case .unknownParameter: return APIError(.badRequest, error.code, error.description)
            case .notInViews: return APIError(.internalServerError, error.code, error.description)
            // Durable: a 2xx, never a 5xx a client would retry into a duplicate.
            case .viewsBehind: return APIError(.accepted, error.code, error.description)
            case .idempotencyKeyInUse: return APIError(.conflict, error.code, error.description)
            case .idempotencyKeyReused(_, let id, let fields):
                var answer = APIError(.unprocessableContent, error.code, error.description, field: fields.first)
                answer.entityId = id
                return answer
            case .tooManyImports: return APIError(.tooManyRequests, error.code, error.description)
            case .asOfBusy, .exportBusy, .matchingBusy:
                var answer = APIError(.serviceUnavailable, error.code, error.description)
                answer.retryAfter = 5
                return answer
            }
        case let error as PeerAttachmentsOverQuota:
            return APIError(.badGateway, "peer_quota_exceeded", error.description)
        case let error as AttachmentsLeftOverQuota:
            return APIError(HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage"), "attachment_quota_exceeded", error.description)
        case let error as BlobError:
            switch error {
            case .tooLarge: return APIError(.contentTooLarge, "attachment_too_large", error.description)
            case .overQuota:
                return APIError(HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage"), "attachment_quota_exceeded", error.description)
            case .invalidDigest: return APIError(.badRequest, "invalid_digest", error.description)
            case .digestMismatch: return APIError(.unprocessableContent, "rejected", error.description)
            }
        case let error as StatementError: return APIError(.badRequest, "invalid_statement", error.description, field: "file")
        case let error as StatementRefused:
            return APIError(
                .unprocessableContent, "bad_rows",
                "\(error.bad.count) row(s) of the statement cannot be read; nothing was imported (or import with skipBadRows=true)",
                field: "file", rows: error.bad.map(\.json))
        case let error as StrictJSONError: return APIError(.badRequest, "malformed_json", "the body is not valid JSON: \(error)")
        case let error as SyncRejection:
            guard let origin = error.forkedOrigin else { return APIError(.unprocessableContent, "rejected", error.description) }
            var answer = APIError(.conflict, "forked_chain", error.description)
            answer.forkedOrigin = origin.description
            return answer
        case let error as LogError:
            switch error {
            case .writerStopped, .notArchived, .io: return APIError(.serviceUnavailable, error.code, error.description)
            case .rejected: return APIError(.badRequest, error.code, error.description)
            default: return APIError(.internalServerError, error.code, error.description)
            }
        case let error as HTTPError:
            let status = error.status
            let code = status == .contentTooLarge ? "body_too_large" : status == .notFound ? "not_found" : "http_\(status.code)"
            return APIError(status, code, error.body ?? status.reasonPhrase)
        default: return APIError(.internalServerError, "internal", "unexpected error: \(error)")
        }
    }

    /// The JSON body. Message and field are cut short (`maxQuoted`): they may quote what the
    /// client sent (a 900 KB unknown key once came back twice, as message and field).
    var json: String {
        func cut(_ text: String) -> String { text.count > Self.maxQuoted ? text.prefix(Self.maxQuoted) + "…" : text }
        let fields: [(String, JSONText)] =
            [("code", .string(code)), ("message", .string(cut(message)))] + (field.map { [("field", .string(cut($0)))] } ?? [])
            + (rows.map { [("rows", .array($0))] } ?? []) + (forkedOrigin.map { [("origin", .string($0))] } ?? [])
            + (entityId.map { [("id", .string($0))] } ?? [])
        return JSONText.object([("error", .object(fields))]).serialized
    }

    /// The JSON response.
    var response: Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: json)))
    }
}
