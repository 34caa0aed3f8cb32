import Foundation
import HTTPTypes
import Hummingbird
import TallyCore
import TallyLedger
import TallyStore

/// Lists with filters and cursor paging, summaries, audit history and the conflict journal:
/// each reads its parameters and hands them to `LedgerViews`, which checks them.
struct QueryRoutes {
    func add(to group: APIRoutes) {
        let expenses = Self.list(
            "Expenses, newest first: {items, nextCursor}.",
            parameters: [
                APIParameter.month, APIParameter.query("from", schema: APIParameter.daySchema),
                APIParameter.query("to", schema: APIParameter.daySchema), APIParameter.query("category", schema: "{type: string, format: uuid}"),
                APIParameter.query("tag", schema: "{type: string}"), APIParameter.query("payee", schema: "{type: string}"),
                APIParameter.query(
                    "text", "Text the payee, memo or payment method contains (matched literally)",
                    schema: "{type: string, minLength: 1, maxLength: \(Limits.maxShortTextLength), pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]+$'}"),
                APIParameter.query("kind", schema: "{type: string, enum: [income, expense]}"), APIParameter.limit,
                APIParameter.query(
                    "cursor", schema: #"{type: string, pattern: "^-?[0-9]{1,18}_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"}"#),
            ])
        group.get("expenses", expenses) { request, context in
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
        group.getDocument("categories", Self.list("Categories as a tree (duplicates merged): {items, merged: [{id, mergedInto, reason}]}.")) { views in
            try views.categoriesDocument()
        }
        group.getDocument(
            "todos",
            Self.list(
                "To-dos: {items}; a challenge's with streaks {current, longest, completionRate} as of the service's day (null for other to-dos)."
            )
        ) { views in try views.todosDocument() }
        // Every budget as written; with `?month=`, those that apply to the month, with spending.
        let budgets = Self.list(
            "Every budget {items: [{id, categoryId, amount, currency, fromMonth, toMonth}]}; with month, the budgets that apply to it {month, items: [{budgetId, categoryId, categoryName, currency, budgeted, spent, remaining, over}]}.",
            parameters: [APIParameter.month])
        group.get("budgets", budgets) { request, context in
            let service = try context.service()
            let parameters = try queryParameters(request, taking: ["month", "asOf"])
            let month = parameters.get("month")
            return try await service.answer(try asOfParameter(request)) { views in try views.budgetsDocument(month: month) }
        }
        // Every account, the latest transfers, and every account's balance at a moment
        // (`?at=` a day or a date-time, default now; `?in=` a currency: the net worth in it).
        group.getDocument("accounts", Self.list("Every account {items: [Account]}, by name.")) { views in try views.accountsDocument() }
        let transfers = Self.list(
            "The latest transfers {items: [Transfer]}, newest first.",
            parameters: [APIParameter.limit])
        group.get("transfers", transfers) { request, context in
            let service = try context.service()
            let parameters = try queryParameters(request, taking: ["limit", "asOf"])
            let text = parameters.get("limit") ?? String(Limits.defaultPageSize)
            guard let limit = Int(text) else { throw ValidationError(field: "limit", "must be 1 to \(Limits.maxPageSize)") }
            return try await service.answer(try asOfParameter(request)) { views in try views.transfersDocument(limit: limit) }
        }
        // A card's bills: `?from=` and `?to=` months (default the six months through next month).
        let bills = Self.list(
            "{items: [{month, from, to, due, charged, cancelled, amount, paid, status}]}",
            about:
                "A card's bills: the statements closing in the months from…to (default the six months through next month), each with its cycle (after the previous closing day through this one; a closing day past a month's end is its last day), due day (the first payment day after the close), what was charged and cancelled in it, the amount, what was paid into the card before the next close, and status paid, due or overdue.",
            parameters: [
                APIParameter.query("from", schema: APIParameter.monthSchema),
                APIParameter.query("to", schema: APIParameter.monthSchema),
            ],
            errors: [400, 404])
        group.get("accounts/:id/bills", bills) { request, context in
            let service = try context.service()
            let uuid = try uuidParameter(context)
            let parameters = try queryParameters(request, taking: ["from", "to", "asOf"])
            let (from, to) = (parameters.get("from"), parameters.get("to"))
            return try await service.answer(try asOfParameter(request)) { views in try views.cardBillsDocument(accountID: uuid, from: from, to: to) }
        }
        // An account's reconciliation: the difference from its statement, what was changed since.
        let reconciliation = Self.list(
            "{accountId, currency, reconciledThrough, statementBalance, balance, difference, reconciledAt, clearedCount, changedSince: [{type, id, date, amount, changedAt}]}",
            about:
                "The account reconciled against a statement (set its reconciledThrough and statementBalance with PATCH /v1/accounts/{id}): the balance the views compute at reconciledThrough, the statement's less it (difference), how many lines are cleared (dated up to reconciledThrough), and the cleared lines changed or added after the reconciliation was written (changedSince), latest first.",
            errors: [400, 404])
        group.get("accounts/:id/reconciliation", reconciliation) { request, context in
            let service = try context.service()
            let uuid = try uuidParameter(context)
            return try await service.answer(try asOfParameter(request)) { views in try views.reconciliationDocument(accountID: uuid) }
        }
        // Split receipts: every one (those needing attention first), one expense's, and a
        // split written whole (its lines must add up to the expense).
        group.getDocument(
            "splits",
            Self.list(
                "{receipts: [SplitReceipt], unattached: [Line]}",
                about:
                    "Split receipts: every expense with lines, those whose lines no longer add up to it (needsAttention, after merged edits) first; unattached: lines whose expense this replica does not hold (a peer's line for an expense not received, or deleted), counted nowhere."
            )
        ) { views in try views.splitReceiptsDocument() }
        let receipt = APIOperation(
            parameters: [APIParameter.asOf],
            responses: [(200, APIResponse.json("The expense as a split receipt (no lines: not split).", schema: "SplitReceipt"))],
            errors: [400, 404])
        group.get("expenses/:id/lines", receipt) { request, context in
            let service = try context.service()
            let uuid = try uuidParameter(context)
            return try await service.answer(try asOfParameter(request)) { views in try views.splitReceiptDocument(expense: uuid) }
        }
        let split = APIOperation(
            "Splits the expense into these lines as one write: lines named by id are kept (changed where they differ), the others added, lines not named deleted. They must add up to the expense's amount; no lines: not split.",
            body: APIBody.json("SplitLines"), responses: [(200, APIResponse.json("The receipt.", schema: "SplitReceipt"))], errors: [400, 404, 409, 413, 415])
        group.put("expenses/:id/lines", split) { request, context in
            let service = try context.service()
            let uuid = try uuidParameter(context)
            let lines = try Ledger.SplitLine.lines(fromJSON: try await jsonBody(request, timeout: service.bodyTimeout))
            let actor = actor(context)
            return json(try await service.ledger.setLines(of: uuid, lines, actor: actor))
        }
        // Who owes whom, and the transfers that settle it.
        group.getDocument(
            "people",
            Self.list(
                "{items: [{name, currency, balance}], settle: [{from, to, amount, currency}], needsAttention: [id], overflowed: [name]}",
                about:
                    "Who paid and who owes: each person's balance per currency from the expenses that name who paid (paidBy) and how they are shared (split, shares), and the settlements; the fewest transfers that settle each currency (at most one fewer than the people); expenses whose parts do not add up, left out to be looked at."
            )
        ) { views in try views.peopleDocument() }
        let balances = Self.list(
            "{at, items: [{id, name, kind, currency, isArchived, balance, otherCurrencyExpenses}], totals: [{currency, balance}], netWorth?: {currency, amount, unconverted}}",
            about:
                "Every account's balance at a moment: its opening balance (from its opening day), plus the incomes and less the expenses that name it in its currency, plus the transfers in and less those out; the totals per currency; with in, the net worth in that currency at each day's rate (balances without a rate listed in unconverted).",
            parameters: [
                APIParameter.query("at", "A day (its end) or a date-time; default now", schema: APIParameter.momentSchema),
                APIParameter.query("in", schema: "{type: string, enum: [\(OpenAPIDocument.currencies)]}"),
            ])
        group.get("balances", balances) { request, context in
            let service = try context.service()
            let parameters = try queryParameters(request, taking: ["at", "in", "asOf"])
            let (at, into) = (parameters.get("at"), parameters.get("in"))
            return try await service.answer(try asOfParameter(request)) { views in try views.balancesDocument(at: at, into: into) }
        }
        // Spending per category per month, income against spending, the net worth at each
        // month's end: the `months` (default 12) months ending with `to` (default this month).
        let months = Self.list(
            "{months, categories: [{categoryId, name, currency, expense: [per month]}], trend: [{currency, income, expense, net}], netWorth: [{month, totals: [{currency, balance}]}]}",
            about:
                "The months ending with to (default this month): categories — spending per top-level category (sub-categories in their parent) and currency, one amount per month; trend — each month's income, expense and net per currency; netWorth — the accounts' balances at each month's end, per currency. Transfers are not spending and are in none of it.",
            parameters: [
                APIParameter.query("to", schema: APIParameter.monthSchema),
                APIParameter.query("months", schema: "{type: integer, minimum: 1, maximum: 120}"),
            ])
        group.get("reports/months", months) { request, context in
            let service = try context.service()
            let parameters = try queryParameters(request, taking: ["to", "months", "asOf"])
            let text = parameters.get("months") ?? "12"
            guard let count = Int(text) else { throw ValidationError(field: "months", "must be 1 to 120") }
            let to = parameters.get("to")
            return try await service.answer(try asOfParameter(request)) { views in try views.reportDocument(to: to, count: count) }
        }
        // The year in review: `?year=` (default this year).
        let year = Self.list(
            "{year, currencies: [{currency, income, expense, net, count, previous: {income, expense}, months, busiestMonth: {month, expense}, topCategories: [{categoryId, name, expense, share}], largest: [{id, date, payee, amount, categoryId}]}], netWorth: {start, end: [{currency, balance}]}}",
            about:
                "The year in review, per currency (never converted): income, spending, net and how many entries, against the year before; spending per month and the busiest month; the top-level categories it went to (with their share); the largest expenses; and the net worth at the start and end of the year. Transfers are not spending.",
            parameters: [APIParameter.query("year", schema: #"{type: string, pattern: "^(000[2-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})$"}"#)])
        group.get("reports/year", year) { request, context in
            let service = try context.service()
            let parameters = try queryParameters(request, taking: ["year", "asOf"])
            let year = parameters.get("year")
            return try await service.answer(try asOfParameter(request)) { views in try views.yearInReviewDocument(year: year) }
        }
        // Every exchange rate.
        group.getDocument("rates", Self.list("Every exchange rate {items: [{id, currency, toCurrency, rate, date}]}.")) { views in try views.ratesDocument() }
        // Every categorisation rule.
        group.getDocument("rules", Self.list("Every categorisation rule {items: [{id, pattern, match, categoryId, tags}]}.")) { views in
            try views.rulesDocument()
        }
        // Every recurring rule, with its next occurrence days.
        group.getDocument("recurring", Self.list("Every recurring rule with its fields and `next` (the next three occurrence days): {items}.")) { views in
            try views.recurringDocument()
        }
        // Skips one occurrence: {"date": "YYYY-MM-DD"} (an occurrence already created is deleted).
        let skip = APIOperation(
            "Skips one occurrence; one already made is deleted.",
            body: APIBody.jsonSchema(
                #"{type: object, additionalProperties: false, required: [date], properties: {date: {type: string, pattern: "\#(OpenAPIDocument.dayPattern)"}}}"#
            ),
            responses: [(200, APIResponse.text("The rule."))], errors: [400, 404, 413, 415])
        group.post("recurring/:id/skip", skip) { request, context in
            let service = try context.service()
            let uuid = try uuidParameter(context)
            guard case .object(let fields) = try await jsonBody(request, timeout: service.bodyTimeout), fields.count == 1,
                let date = fields.first(where: { $0.0 == "date" }), case .string(let day) = date.1
            else { throw ValidationError(field: "date", "give the day to skip, {\"date\": \"YYYY-MM-DD\"}") }
            let actor = actor(context)
            return json(try await service.ledger.skipOccurrence(rule: uuid, day: day, actor: actor))
        }
        let summary = Self.list(
            "A month's totals by currency, category and payment, top payees, and the challenges running that month with their streaks.",
            parameters: [
                APIParameter.query("month", required: true, schema: APIParameter.monthSchema),
                APIParameter.query("category", "Spending by this category's children instead of by top-level category", schema: "{type: string, format: uuid}"),
                APIParameter.query(
                    "by",
                    "purchase (default): every expense in the month it was made; bill: a purchase on a card with a closing day in the month its statement is due (the top payees and budgets stay by purchase date; not with in)",
                    schema: "{type: string, enum: [purchase, bill]}"),
                APIParameter.query(
                    "in",
                    "Also the month's totals in this currency ('in': income, expense, net, converted, unconvertedCount, unconverted — the expenses without a rate on or before their day)",
                    schema: "{type: string, enum: [\(OpenAPIDocument.currencies)]}"),
            ],
            errors: [400, 404])
        group.get("summary", summary) { request, context in
            let service = try context.service()
            guard let month = request.uri.queryParameters.get("month") else { throw ValidationError(field: "month", "required, YYYY-MM") }
            let category = request.uri.queryParameters.get("category")
            let into = request.uri.queryParameters.get("in")
            let by = request.uri.queryParameters.get("by")
            return try await service.answer(try asOfParameter(request)) { views in
                try views.summaryDocument(month: month, category: category, into: into, by: by)
            }
        }
        group.getDocument("summary/months", Self.list("Every month's income and expense per currency.")) { views in try views.monthsDocument() }
        let audit = APIOperation(
            parameters: [APIParameter.asOf],
            pathParameters: [
                "id":
                    #"{name: id, in: path, required: true, schema: {type: string, pattern: "^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[A-Za-z][A-Za-z0-9._]{0,63})$"}}"#
            ], responses: [(200, APIResponse.text("Every event of the entity, oldest first."))], errors: [400, 404])
        group.get("audit/:id", audit) { request, context in
            let service = try context.service()
            let id = EntityID(parsing: context.parameters.get("id")?.removingPercentEncoding ?? "")
            return try await service.answer(try asOfParameter(request)) { views in
                let trail = try views.audit(id)
                guard !trail.events.isEmpty else { throw APIError(.notFound, "not_found", "no events for \(id)") }
                return LedgerViews.auditJSON(trail)
            }
        }
        let conflicts = Self.list(
            "Concurrent writes that lost: {items}.",
            parameters: [APIParameter.query("entity", schema: "{type: string}")])
        group.get("conflicts", conflicts) { request, context in
            let service = try context.service()
            let entity = request.uri.queryParameters.get("entity")
            return try await service.answer(try asOfParameter(request)) { views in try views.conflictsDocument(entity: entity) }
        }
    }

    /// A list, summary or report read now or as of `?asOf=` (and `parameters`): what it
    /// answers, in words.
    static func list(_ answer: String, about description: String? = nil, parameters: [String] = [], errors: [Int] = [400]) -> APIOperation {
        APIOperation(description, parameters: [APIParameter.asOf] + parameters, responses: [(200, APIResponse.text(answer))], errors: errors)
    }
}

/// The request's query parameters, all of them among `names` (`unknownParameter`, a 400, names
/// the first that is not: a misspelt filter must not be ignored silently).
func queryParameters(_ request: Request, taking names: Set<String>) throws -> Parameters {
    let parameters = request.uri.queryParameters
    if let unknown = parameters.first(where: { !names.contains(String($0.key)) }) { throw LedgerError.unknownParameter(String(unknown.key)) }
    return parameters
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
        let (body, index) = try await ledger.read(asOf: asOf, warn: { logger.warning("\($0)") }, query)
        var response = json(body)
        if let index { response.headers[HTTPField.Name("Tally-As-Of-Index")!] = String(index) }
        return response
    }
}
