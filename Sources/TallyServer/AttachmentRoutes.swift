import Foundation
import HTTPTypes
import Hummingbird
import MultipartKit
import NIOCore
import TallyCore
import TallyImages
import TallyLedger
import TallyLog

/// Receipt photos and files (docs/ATTACHMENTS.md): `POST /v1/attachments` stores a raw body or
/// the file part of a `multipart/form-data` body (what a phone's camera input sends) as a blob,
/// written to disk as it arrives — never held in memory, refused with 413 the moment it passes
/// the limit — and answers `{"digest", "size", "contentType"}`; `GET`/`HEAD
/// /v1/attachments/{digest}` stream it back with `ETag`, `Content-Type`, `Content-Length`,
/// `Range` and long-lived caching.
struct AttachmentRoutes {
    func add(to group: APIRoutes) {
        let upload = APIOperation(
            "Stores a receipt photo or file (JPEG, PNG, HEIC/HEIF, WebP, GIF or PDF, told by its bytes; at most 25 MiB by default, refused with 413 as it arrives). The body is the file itself, or a multipart/form-data form whose file part (a filename, or the name 'file') is taken.",
            body:
                "{required: true, content: {application/octet-stream: {schema: {type: string, format: binary}}, image/jpeg: {schema: {type: string, format: binary}}, multipart/form-data: {schema: {type: object, properties: {file: {type: string, format: binary}}}}}}",
            responses: [
                (
                    201,
                    APIResponse.content(
                        "Stored (or held already)",
                        #"application/json: {schema: {type: object, required: [digest, size, contentType], properties: {digest: {type: string, pattern: "^[0-9a-f]{64}$"}, size: {type: integer}, contentType: {type: string}}}}"#
                    )
                )
            ], errors: [400, 408, 413, 415, 503, 507])
        group.post("attachments", upload) { request, context in
            let service = try context.service()
            let limits = service.attachmentLimits
            if let declared = declaredLength(request), declared > limits.maxBytes + Self.multipartAllowance {
                throw BlobError.tooLarge(limit: limits.maxBytes)
            }
            let writer = try service.ledger.blobs.writer(limit: limits.maxBytes)
            defer { writer.abort() }
            let contentType = request.headers[.contentType] ?? "application/octet-stream"
            try await withDeadline(limits.uploadTimeout) {
                if contentType.lowercased().hasPrefix("multipart/form-data") {
                    try await Self.receiveFilePart(of: request.body, boundary: try Self.boundary(in: contentType), into: writer)
                } else {
                    for try await piece in request.body { try writer.write(piece.readableBytesView) }
                }
            }
            guard writer.size > 0 else { throw ValidationError(field: "file", "the attachment is empty") }
            guard let type = AttachmentType.sniff(writer.head) ?? (limits.allowOtherTypes ? "application/octet-stream" : nil),
                limits.allowedTypes.contains(type) || limits.allowOtherTypes
            else {
                throw APIError(
                    .unsupportedMediaType, "unsupported_attachment_type",
                    "attachments are \(limits.allowedTypes.joined(separator: ", ")); these bytes are none of them")
            }
            let info = try await service.run { try writer.finish() }
            return json(.object([("digest", .string(info.digest)), ("size", .int(Int64(info.size))), ("contentType", .string(type))]), status: .created)
        }
        let file = APIOperation(
            parameters: [APIParameter.header("Range"), APIParameter.header("If-None-Match")],
            responses: [
                (
                    200,
                    APIResponse.content(
                        "The file, streamed, with ETag (its digest) and long-lived caching; Content-Type from its bytes.",
                        "image/jpeg: {}, image/png: {}, image/heic: {}, image/heif: {}, image/webp: {}, image/gif: {}, application/pdf: {}, application/octet-stream: {}"
                    )
                ), (206, APIResponse.text("The requested byte range.")), (304, APIResponse.text("Not modified (If-None-Match).")),
                (416, APIResponse.text("Range not satisfiable.")),
            ], errors: [400, 404])
        group.get("attachments/:digest", file) { request, context in try await download(request, context, bodyless: false) }
        let head = APIOperation(
            parameters: file.parameters, responses: file.responses.map { ($0.status, APIResponse.text("As GET, without the body.")) }, errors: [400, 404])
        group.head("attachments/:digest", head) { request, context in try await download(request, context, bodyless: true) }
        // A thumbnail of an image attachment (`?size=` 128, 256 — the default —, 512 or 1024),
        // made on first request and kept as a blob of its own.
        let thumbnail = APIOperation(
            parameters: [
                APIParameter.query("size", schema: "{type: integer, enum: [\(AttachmentType.thumbnailSizes.map(String.init).joined(separator: ", "))]}")
            ],
            responses: [
                (200, APIResponse.content("A JPEG that fits in size×size, upright, without metadata.", "image/jpeg: {schema: {type: string, format: binary}}"))
            ], errors: [400, 404, 415, 422, 503])
        group.get("attachments/:digest/thumbnail", thumbnail) { request, context in
            let service = try context.service()
            let digest = context.parameters.get("digest") ?? ""
            guard BlobStore.isDigest(digest) else { throw BlobError.invalidDigest(digest) }
            let text = request.uri.queryParameters.get("size") ?? "256"
            guard let size = Int(text), Thumbnailer.sizes.contains(size) else {
                throw ValidationError(field: "size", "must be one of \(Thumbnailer.sizes.map(String.init).joined(separator: ", "))")
            }
            let made: BlobInfo?
            do { made = try await service.thumbnails.thumbnail(of: digest, size: size, in: service.ledger.blobs) } catch let failure as Thumbnailer.Failure {
                switch failure {
                case .notAnImage: throw APIError(.unsupportedMediaType, "not_an_image", failure.description)
                case .unsupportedSize: throw ValidationError(field: "size", failure.description)
                case .undecodable(let reason):
                    service.logger.notice("thumbnail: undecodable image", metadata: ["blob.digest": "\(digest)", "vips.error": "\(reason)"])
                    throw APIError(.unprocessableContent, "undecodable_image", failure.description)
                case .tooManyPixels, .tooMuchMemory: throw APIError(.unprocessableContent, "image_too_large", failure.description)
                case .exceededLimits:
                    service.logger.notice("thumbnail: the worker died before it answered", metadata: ["blob.digest": "\(digest)"])
                    throw APIError(.unprocessableContent, "image_too_large", failure.description)
                case .tookTooLong: throw APIError(.unprocessableContent, "image_too_slow", failure.description)
                case .busy: throw APIError(.serviceUnavailable, "thumbnails_busy", failure.description)
                case .workerUnavailable:
                    service.logger.error("thumbnail: the worker could not be started", metadata: ["blob.digest": "\(digest)"])
                    throw APIError(.serviceUnavailable, "thumbnails_unavailable", failure.description)
                }
            }
            guard let made else { throw APIError(.notFound, "not_found", "this replica holds no attachment \(digest)") }
            return try await serve(made.digest, request, context, bodyless: false)
        }
    }

    /// The replication routes of blobs, added to the `/v1/replication` group: which blobs this
    /// replica lacks, a blob's bytes, and a blob sent by a peer — kept only if it arrived whole
    /// and hashes to its name.
    func addReplication(to group: APIRoutes) {
        let missing = APIOperation(
            body: APIBody.jsonSchema(
                #"{type: object, required: [digests], additionalProperties: false, properties: {digests: {type: array, maxItems: 100000, items: {type: string, pattern: "^[0-9a-f]{64}$"}}}}"#
            ), responses: [(200, APIResponse.text("{missing: [digest]}: the ones this replica lacks"))], errors: [400, 413, 415])
        group.post("blobs/missing", missing) { request, context in
            let service = try context.service()
            guard case .object(let fields) = try await jsonBody(request, limit: 8 << 20, timeout: service.bodyTimeout),
                fields.count == 1, case .array(let items)? = fields.first(where: { $0.0 == "digests" })?.1, items.count <= 100_000
            else { throw ValidationError(field: "digests", "send {\"digests\": [up to 100,000 SHA-256 hex digests]}", kind: .malformed) }
            let digests = try items.map { item in
                guard case .string(let digest) = item, BlobStore.isDigest(digest) else { throw BlobError.invalidDigest("\(item)") }
                return digest
            }
            let missing = try await service.ledger.missingBlobs(among: digests)
            return json(.object([("missing", .array(missing.map { .string($0) }))]))
        }
        let blob = APIOperation(
            parameters: [APIParameter.header("Range"), APIParameter.header("If-None-Match")],
            responses: [
                (200, APIResponse.content("The blob", "application/octet-stream: {schema: {type: string, format: binary}}")),
                (206, APIResponse.text("The requested byte range.")), (304, APIResponse.text("Not modified (If-None-Match).")),
                (416, APIResponse.text("Range not satisfiable.")),
            ], errors: [400, 404])
        group.get("blobs/:digest", blob) { request, context in try await download(request, context, bodyless: false) }
        let keep = APIOperation(
            body: APIBody.bytes(["application/octet-stream"]), responses: [(201, APIResponse.text("Kept: it hashed to its name"))],
            errors: [400, 413, 422, 503])
        group.put("blobs/:digest", keep) { request, context in
            let service = try context.service()
            let digest = context.parameters.get("digest") ?? ""
            guard BlobStore.isDigest(digest) else { throw BlobError.invalidDigest(digest) }
            let limits = service.attachmentLimits
            if let declared = declaredLength(request), declared > limits.maxBytes { throw BlobError.tooLarge(limit: limits.maxBytes) }
            let writer = try service.ledger.blobs.writer(limit: limits.maxBytes)
            defer { writer.abort() }
            try await withDeadline(limits.uploadTimeout) {
                for try await piece in request.body { try writer.write(piece.readableBytesView) }
            }
            let info = try await service.run { try writer.finish(expecting: digest) }
            return json(.object([("digest", .string(info.digest)), ("size", .int(Int64(info.size)))]), status: .created)
        }
    }

    /// Room for a multipart body's boundaries and part headers beyond the file's own limit.
    static let multipartAllowance = 64 << 10

    /// The blob named in the path: 200 (or 206 for a satisfiable `Range`, 304 for a matching
    /// `If-None-Match`), streamed from the file by Hummingbird's `FileIO`.
    func download(_ request: Request, _ context: TallyRequestContext, bodyless: Bool) async throws -> Response {
        try await serve(context.parameters.get("digest") ?? "", request, context, bodyless: bodyless)
    }

    /// Serves the blob `digest` (see `download`).
    func serve(_ digest: String, _ request: Request, _ context: TallyRequestContext, bodyless: Bool) async throws -> Response {
        let service = try context.service()
        let blobs = service.ledger.blobs
        guard BlobStore.isDigest(digest) else { throw BlobError.invalidDigest(digest) }
        guard let size = try await service.ledger.heldSize(ofBlob: digest) else {
            throw APIError(.notFound, "not_found", "this replica holds no attachment \(digest) (not uploaded, or not arrived yet by sync)")
        }
        let file = try blobs.file(of: digest)
        let type = try blobs.contentType(of: digest) ?? "application/octet-stream"
        var headers: HTTPFields = [
            .eTag: "\"\(digest)\"", .acceptRanges: "bytes",
            .cacheControl: "private, max-age=31536000, immutable", .contentType: type,
        ]
        Self.addSafetyHeaders(&headers, digest: digest, type: type)
        if let tags = request.headers[.ifNoneMatch],
            tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "\"\(digest)\"" || $0 == "*" })
        {
            return Response(status: .notModified, headers: headers)
        }
        var range = 0...(max(size, 1) - 1)
        var status = HTTPResponse.Status.ok
        if let header = request.headers[.range], size > 0 {
            switch ByteRange.parse(header, size: size) {
            case .whole: break
            case .part(let part):
                range = part
                status = .partialContent
                headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound)/\(size)"
            case .unsatisfiable:
                var refusal = APIError(.rangeNotSatisfiable, "range_not_satisfiable", "the range asks for no byte of the \(size) the attachment holds").response
                refusal.headers[.contentRange] = "bytes */\(size)"
                return refusal
            }
        }
        headers[.contentLength] = "\(size == 0 ? 0 : range.count)"
        if bodyless || size == 0 { return Response(status: status, headers: headers) }
        // Hummingbird's file I/O reads the range in pieces on NIO's blocking pool: never the
        // whole file in memory. (Range and If-None-Match are decided above: its FileMiddleware
        // serves a folder by path, not a blob with the type it was stored with.)
        let body: ResponseBody
        do { body = try await FileIO().loadFile(path: file, range: range, context: context) } catch {
            throw APIError(.notFound, "not_found", "attachment \(digest) went away")
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// The image types a browser shows inline — and the web app shows — with their file
    /// extensions; everything else (HEIC, PDF, bytes taken with `--allow-any-attachment-type`)
    /// is served as a download.
    static let inlineTypes = ["image/jpeg": "jpg", "image/png": "png", "image/webp": "webp", "image/gif": "gif"]
    static let downloadExtensions = ["image/heic": "heic", "image/heif": "heif", "application/pdf": "pdf"]

    /// Uploaded bytes are the uploader's, not ours: a GIF, JPEG or PDF can carry HTML and
    /// script after its first bytes (a polyglot). Served with `nosniff` (the browser keeps to
    /// the stated type), a sandboxing policy that allows nothing (no script, no plugin, no
    /// same-origin access, even if opened as a page), and as a download unless it is an
    /// image type a browser shows.
    static func addSafetyHeaders(_ headers: inout HTTPFields, digest: String, type: String) {
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        headers[HTTPField.Name("Content-Security-Policy")!] = "default-src 'none'; sandbox"
        if let fileExtension = inlineTypes[type] {
            headers[.contentDisposition] = "inline; filename=\"\(digest).\(fileExtension)\""
        } else {
            headers[.contentDisposition] = "attachment; filename=\"\(digest).\(downloadExtensions[type] ?? "bin")\""
        }
    }

    /// The boundary parameter of a multipart content type (1–70 characters, RFC 2046).
    static func boundary(in contentType: String) throws -> String {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            let value = pair[1].hasPrefix("\"") && pair[1].hasSuffix("\"") && pair[1].count >= 2 ? String(pair[1].dropFirst().dropLast()) : pair[1]
            guard (1...70).contains(value.utf8.count) else { break }
            return value
        }
        throw APIError(.badRequest, "invalid_multipart", "a multipart/form-data body needs a boundary of 1 to 70 characters")
    }

    /// Feeds a multipart body through MultipartKit's streaming parser and writes the first part
    /// that carries a file (a `filename`, or the name `file`) to `writer`; other parts may hold
    /// at most `multipartAllowance` bytes in all.
    static func receiveFilePart(of body: RequestBody, boundary: String, into writer: BlobWriter) async throws {
        let parser = MultipartParser(boundary: boundary)
        let state = PartState()
        parser.onHeader = { name, value in
            guard name.lowercased() == "content-disposition" else { return }
            let lowered = value.lowercased()
            if state.file == .notYet, lowered.contains("filename=") || lowered.contains("name=\"file\"") { state.file = .reading }
        }
        parser.onBody = { buffer in
            guard state.failure == nil else { return }
            do {
                if state.file == .reading {
                    try writer.write(buffer.readableBytesView)
                } else {
                    state.otherBytes += buffer.readableBytes
                    if state.otherBytes > multipartAllowance {
                        throw APIError(.contentTooLarge, "body_too_large", "form fields beside the file exceed \(multipartAllowance) bytes")
                    }
                }
            } catch { state.failure = error }
        }
        parser.onPartComplete = { if state.file == .reading { state.file = .done } }
        var guardian = MultipartHeaderGuard(boundary: boundary)
        for try await piece in body {
            try guardian.check(piece.readableBytesView)
            do { try parser.execute(piece) } catch {
                throw APIError(.badRequest, "invalid_multipart", "the multipart/form-data body does not parse")
            }
            if let failure = state.failure { throw failure }
        }
        guard state.file == .done else { throw ValidationError(field: "file", "the form holds no complete file part") }
    }

    /// What the parser's callbacks found (they cannot throw).
    final class PartState {
        enum File { case notYet, reading, done }
        var file = File.notYet
        var otherBytes = 0
        var failure: (any Error)?
    }
}

/// A `Range: bytes=…` header against a file of `size` bytes (RFC 9110 §14): one range is
/// served as 206; several, or a header that is not a byte range, as the whole file.
enum ByteRange: Equatable {
    case whole
    case part(ClosedRange<Int>)
    case unsatisfiable

    static func parse(_ header: String, size: Int) -> ByteRange {
        guard header.hasPrefix("bytes="), size > 0 else { return .whole }
        let spec = header.dropFirst("bytes=".count)
        guard !spec.contains(",") else { return .whole }
        let ends = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard ends.count == 2 else { return .whole }
        switch (Int(ends[0]), Int(ends[1])) {
        case (let first?, let last?) where first >= 0 && last >= first:
            return first < size ? .part(first...min(last, size - 1)) : .unsatisfiable
        case (let first?, nil) where ends[1].isEmpty && first >= 0:
            return first < size ? .part(first...(size - 1)) : .unsatisfiable
        case (nil, let suffix?) where ends[0].isEmpty && suffix >= 0:
            return suffix == 0 ? .unsatisfiable : .part(max(0, size - suffix)...(size - 1))
        default:
            return .whole
        }
    }
}

/// MultipartKit 4.7.1 looks each byte of a part's header *names* up in a 128-entry table, so a
/// byte ≥ 0x80 there crashes the whole process (an index out of range; found by schemathesis).
/// This guard refuses such a byte (400) before the parser sees it, erring on the safe side: it
/// takes every `--boundary` it finds outside a header block, anywhere (the parser takes one
/// mid-line in a preamble), as the start of a header block that runs to the next empty line,
/// and there refuses a byte ≥ 0x80 before a line's first `:`. Header values (UTF-8 file names)
/// and bodies pass as they are; a body cannot hold its own boundary, so no real upload is refused.
///
/// Inside a header block a `--boundary` is text, as the parser reads it (`-` and letters are
/// name bytes): taking it for a new block there started the guard's line after the parser's,
/// past the name the parser was still reading, and let its next byte through (found by review:
/// `--B\r\n--B` then 0x80 killed the process).
///
/// It also bounds a header block's size (`maxHeaderLine`, `maxHeaderBlock`): MultipartKit
/// copies the header it is reading at every piece of body that arrives, so a 40 MiB header
/// line cost a minute of CPU, and header bytes count toward no other limit.
struct MultipartHeaderGuard {
    /// The longest header line (a file name of 255 UTF-8 characters fits many times over).
    static let maxHeaderLine = 8 << 10
    /// The most bytes of one part's header lines together.
    static let maxHeaderBlock = 32 << 10
    private let delimiter: [UInt8]
    /// KMP failure function of `delimiter`, so a match is found wherever it starts.
    private let fallback: [Int]
    private var matched = 0
    private var inHeaders = false
    private var beforeColon = true
    private var lineLength = 0
    private var blockLength = 0
    /// Whether the last header byte was a CR: a header line ends only at CR LF, as
    /// MultipartKit reads it (a bare LF is its value's text, so a line this guard took for a
    /// header's end — and the empty "line" after it for the block's — let the next bytes reach
    /// the parser's name table unchecked: a byte ≥ 0x80 there read past it and killed the process).
    private var afterCR = false

    init(boundary: String) {
        delimiter = Array("--\(boundary)".utf8)
        var fallback = [0]
        var length = 0
        for position in 1..<delimiter.count {
            while length > 0, delimiter[position] != delimiter[length] { length = fallback[length - 1] }
            if delimiter[position] == delimiter[length] { length += 1 }
            fallback.append(length)
        }
        self.fallback = fallback
    }

    mutating func check(_ bytes: some Sequence<UInt8>) throws {
        for byte in bytes {
            guard inHeaders else {
                while matched > 0, byte != delimiter[matched] { matched = fallback[matched - 1] }
                if byte == delimiter[matched] { matched += 1 }
                if matched == delimiter.count {
                    matched = 0  // matched again only once the header block has ended
                    (inHeaders, beforeColon, lineLength, blockLength, afterCR) = (true, false, 1, 0, false)  // the rest of the delimiter line is not a header
                }
                continue
            }
            blockLength += 1
            guard lineLength <= Self.maxHeaderLine, blockLength <= Self.maxHeaderBlock else {
                throw APIError(
                    .badRequest, "invalid_multipart",
                    "a part's header lines are longer than \(Self.maxHeaderLine >> 10) KiB each or \(Self.maxHeaderBlock >> 10) KiB together")
            }
            guard afterCR == (byte == 0x0A) else {
                throw APIError(.badRequest, "invalid_multipart", "a part's header lines must end with CR LF, and hold no other CR or LF")
            }
            switch byte {
            case 0x0A:
                if lineLength == 0 { inHeaders = false }  // an empty line ends the header block
                (beforeColon, lineLength, afterCR) = (true, 0, false)
            case 0x0D:
                afterCR = true
            case UInt8(ascii: ":"):
                beforeColon = false
                lineLength += 1
            default:
                lineLength += 1
                if beforeColon, byte >= 0x80 {
                    throw APIError(.badRequest, "invalid_multipart", "a part's header name holds a byte that is not ASCII")
                }
            }
        }
    }
}
