import Foundation
import HTTPTypes
import Hummingbird
import TallyCore
import TallyLedger
import TallyStore

/// Lists with filters and cursor paging, summaries, audit history and the conflict journal:
/// each reads its parameters and hands them to `LedgerViews`, which checks them.
struct QueryRoutes {
    func add(to group: RouterGroup<TallyRequestContext>) {
        group.get("expenses") { request, context in
            let service = try context.service()
            let asOf = try asOfParameter(request)
            let query = try ExpenseQuery(request.uri.queryParameters.filter { $0.key != "asOf" }.map { (String($0.key), String($0.value)) })
            // A page read straight off an index is answered on the request's task, as a GET by
            // id is (the hop to the service's threads and back was a quarter of its cost); a
            // page that may scan runs on the service's threads, never holding one of the few
            // threads every request's task runs on.
            if asOf == nil, query.filter.walksOneIndexInOrder { return json(try service.views.expensesPageJSON(query)) }
            return try await service.answer(asOf) { views in try views.expensesPageJSON(query) }
        }
        group.getDocument("categories") { views in try views.categoriesDocument() }
        group.getDocument("todos") { views in try views.todosDocument() }
        // Every budget as written; with `?month=`, those that apply to the month, with spending.
        group.get("budgets") { request, context in
            let service = try context.service()
            let parameters = request.uri.queryParameters
            if let unknown = parameters.first(where: { $0.key != "month" && $0.key != "asOf" }) { throw LedgerError.unknownParameter(String(unknown.key)) }
            let month = parameters.get("month")
            return try await service.answer(try asOfParameter(request)) { views in try views.budgetsDocument(month: month) }
        }
        // Every account, the latest transfers, and every account's balance at a moment
        // (`?at=` a day or a date-time, default now; `?in=` a currency: the net worth in it).
        group.getDocument("accounts") { views in try views.accountsDocument() }
        group.get("transfers") { request, context in
            let service = try context.service()
            let parameters = request.uri.queryParameters
            if let unknown = parameters.first(where: { $0.key != "limit" && $0.key != "asOf" }) { throw LedgerError.unknownParameter(String(unknown.key)) }
            let text = parameters.get("limit") ?? String(Limits.defaultPageSize)
            guard let limit = Int(text) else { throw ValidationError(field: "limit", "must be 1 to \(Limits.maxPageSize)") }
            return try await service.answer(try asOfParameter(request)) { views in try views.transfersDocument(limit: limit) }
        }
        // A card's bills: `?from=` and `?to=` months (default the six months through next month).
        group.get("accounts/:id/bills") { request, context in
            let service = try context.service()
            let uuid = try uuidParameter(context)
            let parameters = request.uri.queryParameters
            if let unknown = parameters.first(where: { !["from", "to", "asOf"].contains($0.key) }) { throw LedgerError.unknownParameter(String(unknown.key)) }
            let (from, to) = (parameters.get("from"), parameters.get("to"))
            return try await service.answer(try asOfParameter(request)) { views in try views.cardBillsDocument(accountID: uuid, from: from, to: to) }
        }
        // An account's reconciliation: the difference from its statement, what was changed since.
        group.get("accounts/:id/reconciliation") { request, context in
            let service = try context.service()
            let uuid = try uuidParameter(context)
            return try await service.answer(try asOfParameter(request)) { views in try views.reconciliationDocument(accountID: uuid) }
        }
        // Split receipts: every one (those needing attention first), one expense's, and a
        // split written whole (its lines must add up to the expense).
        group.getDocument("splits") { views in try views.splitReceiptsDocument() }
        group.get("expenses/:id/lines") { request, context in
            let service = try context.service()
            let uuid = try uuidParameter(context)
            return try await service.answer(try asOfParameter(request)) { views in try views.splitReceiptDocument(expense: uuid) }
        }
        group.put("expenses/:id/lines") { request, context in
            let service = try context.service()
            let uuid = try uuidParameter(context)
            let lines = try Ledger.SplitLine.lines(fromJSON: try await jsonBody(request, timeout: service.bodyTimeout))
            let actor = actor(context)
            return json(try await service.ledger.setLines(of: uuid, lines, actor: actor))
        }
        // Who owes whom, and the transfers that settle it.
        group.getDocument("people") { views in try views.peopleDocument() }
        group.get("balances") { request, context in
            let service = try context.service()
            let parameters = request.uri.queryParameters
            if let unknown = parameters.first(where: { !["at", "in", "asOf"].contains($0.key) }) { throw LedgerError.unknownParameter(String(unknown.key)) }
            let (at, into) = (parameters.get("at"), parameters.get("in"))
            return try await service.answer(try asOfParameter(request)) { views in try views.balancesDocument(at: at, into: into) }
        }
        // Spending per category per month, income against spending, the net worth at each
        // month's end: the `months` (default 12) months ending with `to` (default this month).
        group.get("reports/months") { request, context in
            let service = try context.service()
            let parameters = request.uri.queryParameters
            if let unknown = parameters.first(where: { !["to", "months", "asOf"].contains($0.key) }) {
                throw LedgerError.unknownParameter(String(unknown.key))
            }
            let text = parameters.get("months") ?? "12"
            guard let count = Int(text) else { throw ValidationError(field: "months", "must be 1 to 120") }
            let to = parameters.get("to")
            return try await service.answer(try asOfParameter(request)) { views in try views.reportDocument(to: to, count: count) }
        }
        // The year in review: `?year=` (default this year).
        group.get("reports/year") { request, context in
            let service = try context.service()
            let parameters = request.uri.queryParameters
            if let unknown = parameters.first(where: { !["year", "asOf"].contains($0.key) }) { throw LedgerError.unknownParameter(String(unknown.key)) }
            let year = parameters.get("year")
            return try await service.answer(try asOfParameter(request)) { views in try views.yearInReviewDocument(year: year) }
        }
        // Every exchange rate.
        group.getDocument("rates") { views in try views.ratesDocument() }
        // Every categorisation rule.
        group.getDocument("rules") { views in try views.rulesDocument() }
        // Every recurring rule, with its next occurrence days.
        group.getDocument("recurring") { views in try views.recurringDocument() }
        // Skips one occurrence: {"date": "YYYY-MM-DD"} (an occurrence already created is deleted).
        group.post("recurring/:id/skip") { request, context in
            let service = try context.service()
            let uuid = try uuidParameter(context)
            guard case .object(let fields) = try await jsonBody(request, timeout: service.bodyTimeout), fields.count == 1,
                let date = fields.first(where: { $0.0 == "date" }), case .string(let day) = date.1
            else { throw ValidationError(field: "date", "give the day to skip, {\"date\": \"YYYY-MM-DD\"}") }
            let actor = actor(context)
            return json(try await service.ledger.skipOccurrence(rule: uuid, day: day, actor: actor))
        }
        group.get("summary") { request, context in
            let service = try context.service()
            guard let month = request.uri.queryParameters.get("month") else { throw ValidationError(field: "month", "required, YYYY-MM") }
            let category = request.uri.queryParameters.get("category")
            let into = request.uri.queryParameters.get("in")
            let by = request.uri.queryParameters.get("by")
            return try await service.answer(try asOfParameter(request)) { views in
                try views.summaryDocument(month: month, category: category, into: into, by: by)
            }
        }
        group.getDocument("summary/months") { views in try views.monthsDocument() }
        group.get("audit/:id") { request, context in
            let service = try context.service()
            let id = EntityID(parsing: context.parameters.get("id")?.removingPercentEncoding ?? "")
            return try await service.answer(try asOfParameter(request)) { views in
                let trail = try views.audit(id)
                guard !trail.events.isEmpty else { throw APIError(.notFound, "not_found", "no events for \(id)") }
                return LedgerViews.auditJSON(trail)
            }
        }
        group.get("conflicts") { request, context in
            let service = try context.service()
            let entity = request.uri.queryParameters.get("entity")
            return try await service.answer(try asOfParameter(request)) { views in try views.conflictsDocument(entity: entity) }
        }
    }
}

/// `?asOf=`: a log index or a moment (`AsOf`); nil when not given.
func asOfParameter(_ request: Request) throws -> AsOf? {
    try request.uri.queryParameters.get("asOf").map { text throws(ValidationError) in try AsOf(parsing: text) }
}

extension TallyService {
    /// Answers a GET from the views now, or as of `asOf` — then with the log index answered
    /// for in `Tally-As-Of-Index` (a moment or an index past the views' is answered as now).
    func answer(_ asOf: AsOf?, _ query: @escaping @Sendable (LedgerViews) throws -> JSONText) async throws -> Response {
        let logger = logger
        let read = { [views] in
            try await self.run {
                let answering = try asOf.map { try views.asOf($0, warn: { logger.warning("\($0)") }) } ?? views
                return (try query(answering), answering.asOfIndex)
            }
        }
        let (body, index): (JSONText, UInt64?)
        if asOf == nil {
            (body, index) = try await read()
        } else {
            try await asOfGate.enter()
            do {
                (body, index) = try await read()
                await asOfGate.leave()
            } catch {
                await asOfGate.leave()
                throw error
            }
        }
        var response = json(body)
        if let index { response.headers[HTTPField.Name("Tally-As-Of-Index")!] = String(index) }
        return response
    }
}

/// As-of reads one at a time: each applies up to a snapshot interval of events (about half a
/// second) and holds its snapshot's write lock meanwhile, so running several at once only
/// makes them wait on each other inside SQLite. A few more wait their turn here; beyond that a
/// client is told to retry (503) instead of holding a thread for a minute.
actor AsOfGate {
    private var running = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private let maxWaiting: Int

    init(maxWaiting: Int = 16) { self.maxWaiting = maxWaiting }

    func enter() async throws {
        guard running else {
            running = true
            return
        }
        guard waiting.count < maxWaiting else {
            throw APIError(
                .serviceUnavailable, "as_of_busy", "\(maxWaiting + 1) reads of the ledger as it was are already running or waiting; retry in a few seconds")
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty { running = false } else { waiting.removeFirst().resume() }
    }
}

extension RouterGroup<TallyRequestContext> {
    /// A GET answering one of `LedgerViews`' documents, now or as of `?asOf=`.
    func getDocument(_ path: RouterPath, _ document: @escaping @Sendable (LedgerViews) throws -> JSONText) {
        get(path) { request, context in try await context.service().answer(try asOfParameter(request), document) }
    }
}
