import Hummingbird
import TallyCore

/// Refuses, before anything else looks at it, a request whose form the HTTP parser lets
/// through but no route can read as the client meant:
/// - a query with a `%` not followed by two hex digits (`?memo=%zz`), or whose escapes make
///   bytes that are not UTF-8 (`?text=%C3`): 400 `invalid_query`. Hummingbird decodes such a
///   query leniently (the first as itself, the second as U+FFFD), so a route would have read
///   something other than what was sent;
/// - a body in a transfer coding other than `chunked` (`Transfer-Encoding: gzip, chunked`):
///   501 `unsupported_transfer_encoding`. The parser undoes the chunking alone, so a route
///   would have read the still-compressed bytes as the body.
struct RequestFormMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let query = request.uri.query, !Self.isReadableAsSent(query) {
            throw APIError(
                .badRequest, "invalid_query",
                "the query has a '%' not followed by two hex digits (encode a '%' itself as %25), or escapes bytes that are not UTF-8")
        }
        for coding in request.headers[values: .transferEncoding].flatMap({ $0.split(separator: ",") }) {
            guard coding.trimmingCharacters(in: .whitespaces).lowercased() == "chunked" else {
                throw APIError(
                    .notImplemented, "unsupported_transfer_encoding",
                    "the body's transfer coding '\(coding.trimmingCharacters(in: .whitespaces).prefix(40))' is not served; send it as it is, or chunked")
            }
        }
        return try await next(request, context)
    }

    /// Whether every `%` in `text` starts an escape of two hex digits, and the bytes the
    /// escapes make, with the rest, are UTF-8.
    static func isReadableAsSent(_ text: String) -> Bool {
        var decoded: [UInt8] = []
        var bytes = text.utf8.makeIterator()
        while let byte = bytes.next() {
            guard byte == UInt8(ascii: "%") else {
                decoded.append(byte)
                continue
            }
            guard let high = bytes.next().flatMap(Hex.value(of:)), let low = bytes.next().flatMap(Hex.value(of:)) else { return false }
            decoded.append(high << 4 | low)
        }
        return String(validating: decoded, as: UTF8.self) != nil
    }
}
