import Foundation
import Hummingbird
import TallyCore
import TallyImport
import TallyLedger

/// Statement imports (docs/IMPORT.md): `POST /v1/imports` takes the file itself as the body
/// (a CSV or an .xlsx, told by its bytes unless `format` says), how to read it in the query,
/// and answers with the same report as `tally import … --json`; `GET /v1/imports` lists them.
struct ImportRoutes {

    /// The largest statement file taken.
    static let maxBytes = 64 << 20
    static let parameters: Set<String> = [
        "format", "name", "dryRun", "skipBadRows", "mapping", "account", "accountId", "currency", "encoding", "delimiter", "headerRow", "positiveIs",
    ]

    /// `POST /v1/imports` as the document describes it.
    static let importing = APIOperation(
        "Imports a bank or card statement (docs/IMPORT.md): the body is the file itself, a CSV (UTF-8, UTF-16 with BOM, or CP949), an .xlsx workbook or an OFX/QFX file, told by its bytes unless format says. Each row becomes an expense once: importing the same or an overlapping statement again creates only rows the ledger never had. A row that cannot be read refuses the whole file (422 bad_rows, listing them) unless skipBadRows.",
        parameters: [
            APIParameter.query("format", schema: "{type: string, enum: [csv, xlsx, ofx]}"),
            APIParameter.query("name", "The file's name, kept in the import's record", schema: "{type: string, maxLength: 100}"),
            APIParameter.query("dryRun", "Report what would be created; write nothing", schema: #"{type: string, enum: ["true", "false"]}"#),
            APIParameter.query("skipBadRows", schema: #"{type: string, enum: ["true", "false"]}"#),
            APIParameter.query(
                "mapping", "A built-in layout, or one saved with tally import mappings save (its name, letters, digits, - and _)",
                schema: "{type: string, enum: [\(StatementLayout.builtIn.map(\.name).joined(separator: ", "))]}"),
            APIParameter.query(
                "account", "Which account or card: part of each row's import key", schema: "{type: string, maxLength: \(Limits.maxShortTextLength)}"),
            APIParameter.query(
                "accountId",
                "The ledger's account the statement is of (a card statement: that card's account): every imported row names it (a live account, else 409). It is not part of the import keys: two cards' statements with the same purchases need account too",
                schema: "{type: string, format: uuid}"),
            APIParameter.query("currency", schema: "{type: string, enum: [\(OpenAPIDocument.currencies)]}"),
            APIParameter.query("encoding", schema: "{type: string, enum: [utf-8, utf-16le, utf-16be, cp949, euc-kr]}"),
            APIParameter.query("delimiter", schema: #"{type: string, enum: [",", ";", tab]}"#),
            APIParameter.query("headerRow", schema: "{type: integer, minimum: 0, maximum: 1000000}"),
            APIParameter.query("positiveIs", schema: "{type: string, enum: [expense, income]}"),
        ],
        body: APIBody.bytes(["text/csv", "application/octet-stream", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"], minLength: 1),
        responses: [
            (200, APIResponse.text("A dry run, or nothing new: {dryRun, importId: null, layouts, encoding, created, duplicates, skipped, bad}")),
            (201, APIResponse.text("Imported, durably, as one batch: the same report with importId")),
        ], errors: [400, 408, 409, 413, 422, 429, 503])

    /// An export's bytes as the body, its turn held until they are written (`Ledger.export`).
    static func sending(_ export: (value: ByteBuffer, turn: Turns.Ticket)) -> ResponseBody {
        ResponseBody(contentLength: export.value.readableBytes) { writer in
            defer { export.turn.leave() }
            try await writer.write(export.value)
            try await writer.finish(nil)
        }
    }

    func add(to group: APIRoutes) {
        // The data out: `format=csv` (expenses in [from, to), UTF-8 with BOM) or `jsonl` (every entity).
        let export = APIOperation(
            "The data out: format=csv gives every expense dated in [from, to), oldest first, in UTF-8 with a BOM (date, kind, amount, currency, category path, payee, payment, memo, tags, attachments, id) — importable again; format=jsonl gives every live entity, one JSON object a line (from and to, if given, choose which expenses).",
            parameters: [
                APIParameter.query("format", schema: "{type: string, enum: [csv, jsonl]}"),
                APIParameter.query("from", "A day, YYYY-MM-DD (the CLI also takes a date-time)", schema: APIParameter.daySchema),
                APIParameter.query("to", "A day, YYYY-MM-DD, exclusive", schema: APIParameter.daySchema),
            ], responses: [(200, APIResponse.content("The export", "text/csv: {schema: {type: string}}, application/jsonl: {schema: {type: string}}"))],
            errors: [400, 503])
        group.get("export", export) { request, context in
            let service = try context.service()
            let query = try queryParameters(request, taking: ["format", "from", "to"])
            func date(_ name: String) throws -> DateTime? {
                try query.get(name).map { text in
                    guard let date = DateTime(iso8601: text) else { throw ValidationError(field: name, "must be an ISO 8601 date or date-time") }
                    return date
                }
            }
            let (from, to) = (try date("from"), try date("to"))
            switch query.get("format") ?? "csv" {
            case "csv":
                let export = try await service.ledger.export { views in ByteBuffer(bytes: try StatementWriter.csv(try views.exportTable(from: from, to: to))) }
                return Response(
                    status: .ok, headers: [.contentType: "text/csv; charset=utf-8", .contentDisposition: "attachment; filename=\"tally-expenses.csv\""],
                    body: Self.sending(export))
            case "jsonl":
                let export = try await service.ledger.export { views in ByteBuffer(bytes: try views.exportJSONLines(from: from, to: to)) }
                return Response(
                    status: .ok, headers: [.contentType: "application/jsonl; charset=utf-8", .contentDisposition: "attachment; filename=\"tally.jsonl\""],
                    body: Self.sending(export))
            default: throw ValidationError(field: "format", "must be csv or jsonl")
            }
        }
        let imports = APIOperation(responses: [(200, APIResponse.text("Every statement import: {items: [{id, fileName, digest, format, count}]}."))])
        group.get("imports", imports) { _, context in
            let service = try context.service()
            return json(try await service.ledger.read { views in try views.importsDocument() })
        }
        group.post("imports", Self.importing) { request, context in
            let service = try context.service()
            let query = try queryParameters(request, taking: Self.parameters)
            func flag(_ name: String) throws -> Bool {
                switch query.get(name) {
                case nil, "false": return false
                case "true": return true
                default: throw ValidationError(field: name, "must be true or false")
                }
            }
            let (dryRun, skipBadRows) = (try flag("dryRun"), try flag("skipBadRows"))
            let named = try await service.run { () throws -> (currency: String, layout: (StatementLayout, Int?)??) in
                let settings = { try service.views.settings().map { (key: $0.key, value: $0.value) } }
                return (try service.ledger.defaultCurrency(), try query.get("mapping").map { try SavedMapping.layout(named: $0, settings: try settings()) })
            }
            let options = try Self.options(query, defaultCurrency: named.currency, layout: named.layout)
            let tooLarge = APIError(.contentTooLarge, "body_too_large", "a statement is at most \(Self.maxBytes >> 20) MiB")
            if let declared = declaredLength(request), declared > Self.maxBytes { throw tooLarge }
            let body = request.body
            let actor = actor(context)
            // The slot first, then the file: files wait in memory only as many as the slots.
            let report = try await service.ledger.withImportSlot { slot in
                let collected = Mutex<ByteBuffer?>(nil)
                try await withDeadline(service.bodyTimeout * 10) {
                    let buffer = try await collect(body, upTo: Self.maxBytes, tooLarge: tooLarge)
                    collected.withLock { $0 = buffer }
                }
                let bytes = Array(collected.withLock { $0.take() }?.readableBytesView ?? ByteBuffer().readableBytesView)
                guard !bytes.isEmpty else { throw ValidationError(field: "file", "the body is empty: send the statement file itself") }
                let format = query.get("format") ?? StatementReader.format(of: bytes)
                guard ["csv", "xlsx", "ofx"].contains(format) else { throw ValidationError(field: "format", "must be csv, xlsx or ofx") }
                var options = options
                if format == "xlsx" { options.encoding = nil }
                let name = query.get("name") ?? "statement.\(format)"
                let finalOptions = options
                return try await service.ledger.importFile(
                    bytes, fileName: name, format: format, dryRun: dryRun, skipBadRows: skipBadRows, actor: actor, holding: slot
                ) { bytes in try StatementReader.file(bytes, format: format, options: finalOptions) }
            }
            return json(report.json, status: report.importID != nil ? .created : .ok)
        }
    }

    /// How to read the statement, from the query (the CLI's flags, by the same names).
    static func options(_ query: Parameters, defaultCurrency: String, layout: (StatementLayout, Int?)??) throws -> StatementOptions {
        var options = StatementOptions()
        switch layout {
        case nil: break
        case .some(nil):
            throw ValidationError(
                field: "mapping",
                "must be one of \(StatementLayout.builtIn.map(\.name).joined(separator: ", ")), or a name saved with tally import mappings save")
        case .some(.some(let (named, headerRow))):
            options.layouts = [named]
            options.headerRow = headerRow
        }
        if let text = query.get("headerRow") {
            guard let row = Int(text), (0...1_000_000).contains(row) else { throw ValidationError(field: "headerRow", "must be 0 to 1000000") }
            options.headerRow = row
        }
        let currency = (query.get("currency") ?? defaultCurrency)
        guard Currency.isValid(currency) else { throw ValidationError(field: "currency", "must be an ISO 4217 code in capitals") }
        options.currency = currency
        if let account = query.get("account") { options.account = account }
        if let text = query.get("accountId") {
            guard let account = UUID(uuidString: text) else { throw ValidationError(field: "accountId", "must be an account's id (a UUID)") }
            options.accountId = account
        }
        if let name = query.get("encoding") {
            guard let encoding = StatementEncoding(name: name) else { throw ValidationError(field: "encoding", "must be utf-8, utf-16le, utf-16be or cp949") }
            options.encoding = encoding
        }
        switch query.get("delimiter") {
        case nil, ",": options.delimiter = ","
        case ";": options.delimiter = ";"
        case "tab": options.delimiter = "\t"
        default: throw ValidationError(field: "delimiter", "must be , ; or tab")
        }
        switch query.get("positiveIs") {
        case nil, "expense": options.positiveIsIncome = false
        case "income": options.positiveIsIncome = true
        default: throw ValidationError(field: "positiveIs", "must be expense or income")
        }
        return options
    }
}

import Synchronization
