import Hummingbird

/// Refuses, before anything else looks at it, a request whose form the HTTP parser lets
/// through but no route can read as the client meant:
/// - a query with a `%` not followed by two hex digits (`?memo=%zz`): 400 `invalid_query`.
///   Hummingbird decodes such a query leniently, so a route would have read something other
///   than what was sent;
/// - a body in a transfer coding other than `chunked` (`Transfer-Encoding: gzip, chunked`):
///   501 `unsupported_transfer_encoding`. The parser undoes the chunking alone, so a route
///   would have read the still-compressed bytes as the body.
struct RequestFormMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let query = request.uri.query, !Self.isPercentEncodedWell(query) {
            throw APIError(.badRequest, "invalid_query", "the query has a '%' not followed by two hex digits; encode a '%' itself as %25")
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

    /// Whether every `%` in `text` starts an escape of two hex digits.
    static func isPercentEncodedWell(_ text: String) -> Bool {
        var bytes = text.utf8.makeIterator()
        while let byte = bytes.next() {
            guard byte == UInt8(ascii: "%") else { continue }
            guard let high = bytes.next(), let low = bytes.next(), high.isHexDigit, low.isHexDigit else { return false }
        }
        return true
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
