import Foundation
import Hummingbird
import TallyCore
import TallyLog
import TallyStore

/// Lists with filters and cursor paging, summaries, audit history and the conflict journal.
struct QueryRoutes {
    let service: TallyService

    func add(to group: RouterGroup<TallyRequestContext>) {
        group.get("expenses") { request, _ in
            let query = request.uri.queryParameters
            var filter = ExpenseFilter()
            for name in query.map({ String($0.key) }) where !["month", "from", "to", "category", "tag", "kind", "limit", "cursor"].contains(name) {
                throw APIError(.badRequest, "unknown_parameter", "unknown query parameter '\(name)'")
            }
            if let month = query.get("month") { filter.month = try Self.month(month) }
            if let from = query.get("from") { filter.from = try Self.date(from, "from") }
            if let to = query.get("to") { filter.to = try Self.date(to, "to") }
            if let category = query.get("category") {
                guard let uuid = UUID(uuidString: category) else { throw EntityInput.invalid("category", "must be a UUID") }
                filter.categoryId = uuid.lowercased
            }
            filter.tag = query.get("tag")
            if let kind = query.get("kind") {
                guard ["income", "expense"].contains(kind) else { throw EntityInput.invalid("kind", "must be income or expense") }
                filter.kind = kind
            }
            if let limit = query.get("limit") {
                guard let number = Int(limit), (1...1_000).contains(number) else { throw EntityInput.invalid("limit", "must be 1 to 1000") }
                filter.limit = number
            }
            if let cursor = query.get("cursor") {
                // Exactly the shape `nextCursor` has (the OpenAPI pattern says the same): up to 18
                // digits of milliseconds, "_", a lowercase UUID.
                let parts = cursor.split(separator: "_", maxSplits: 1)
                let digits = parts.first.map { $0.hasPrefix("-") ? $0.dropFirst() : $0 } ?? ""
                guard parts.count == 2, (1...18).contains(digits.count), digits.allSatisfy({ ("0"..."9").contains($0) }), let millis = Int64(parts[0]),
                      UUID(uuidString: String(parts[1])) != nil, parts[1] == parts[1].lowercased()
                else { throw EntityInput.invalid("cursor", "not a cursor this API returned") }
                filter.after = (millis, String(parts[1]))
            }
            let finalFilter = filter
            let rows = try await service.projector.database.read { try ProjectionQueries.expenses($0, finalFilter) }
            let next: JSONText = rows.count == finalFilter.limit ? rows.last.map { .string("\($0.dateMillis)_\($0.id)") } ?? .null : .null
            return json(.object([("items", .array(rows.map(ViewJSON.expense))), ("nextCursor", next)]))
        }
        group.get("categories") { _, _ in
            let tree = try await service.projector.database.read { try ProjectionQueries.categoryTree($0) }
            return json(.object([("items", .array(tree.map { ViewJSON.category($0.category, depth: $0.depth) }))]))
        }
        group.get("todos") { _, _ in
            let todos = try await service.projector.database.read { try ProjectionQueries.todos($0) }
            return json(.object([("items", .array(todos.map(ViewJSON.todo)))]))
        }
        group.get("summary") { request, _ in
            guard let text = request.uri.queryParameters.get("month") else { throw EntityInput.invalid("month", "required, YYYY-MM") }
            let month = try Self.month(text)
            let summary = try await service.projector.database.read { try ProjectionQueries.summary($0, month: month) }
            return json(ViewJSON.summary(summary))
        }
        group.get("summary/months") { _, _ in
            let totals = try await service.projector.database.read { try ProjectionQueries.monthlyTotals($0) }
            return json(.object([("items", ViewJSON.monthlyTotals(totals))]))
        }
        group.get("audit/:id") { _, context in
            let id = EntityID(parsing: context.parameters.get("id")?.removingPercentEncoding ?? "")
            let events = try await service.run {
                var found: [JSONText] = []
                try service.directory.reader.forEachEvent { if $0.event.entityID == id { found.append($0.event.json(index: $0.index, hash: $0.hash)) } }
                return found
            }
            guard !events.isEmpty else { throw APIError(.notFound, "not_found", "no events for \(id)") }
            let merge = try await service.projector.database.read { try ProjectionQueries.categoryMerge($0, loserID: id.description) }
            return json(.object([("events", .array(events)),
                                 ("mergedInto", merge.map { .object([("categoryId", .string($0.winnerID)), ("reason", .string($0.reason))]) } ?? .null)]))
        }
        group.get("conflicts") { request, _ in
            let entity = request.uri.queryParameters.get("entity")
            let rows = try await service.projector.database.read { try ProjectionQueries.conflicts($0, entityID: entity) }
            return json(.object([("items", .array(rows.map(ViewJSON.conflict)))]))
        }
    }

    static func month(_ text: String) throws -> String {
        guard text.count == 7, DateTime(iso8601: text + "-01") != nil else { throw EntityInput.invalid("month", "must be YYYY-MM") }
        return text
    }

    static func date(_ text: String, _ field: String) throws -> DateTime {
        guard let date = DateTime(iso8601: text) else { throw EntityInput.invalid(field, "must be an ISO 8601 date or date-time") }
        return date
    }
}
