import Foundation
import Hummingbird
import TallyCore
import TallyLedger
import TallyStore

/// Lists with filters and cursor paging, summaries, audit history and the conflict journal:
/// each reads its parameters and hands them to `LedgerViews`, which checks them.
struct QueryRoutes {
    let service: TallyService

    func add(to group: RouterGroup<TallyRequestContext>) {
        let views = service.views
        group.get("expenses") { request, _ in
            let query = try ExpenseQuery(request.uri.queryParameters.map { (String($0.key), String($0.value)) })
            return json(views.pageJSON(try await service.run { try views.expenses(query) }))
        }
        group.get("categories") { _, _ in
            let (tree, merges) = try await service.run { (try views.categoryTree(), try views.categoryMerges()) }
            return json(.object([("items", .array(tree.map { ViewJSON.category($0.category, depth: $0.depth) })),
                                 ("merged", .array(merges.map(ViewJSON.categoryMerge)))]))
        }
        group.get("todos") { _, _ in
            json(.object([("items", .array(try await service.run { try views.todos() }.map { ViewJSON.todo($0, isHeld: views.isAttachmentHeld) }))]))
        }
        // Every budget as written; with `?month=`, those that apply to the month, with spending.
        group.get("budgets") { request, _ in
            let parameters = request.uri.queryParameters
            if let unknown = parameters.first(where: { $0.key != "month" }) { throw LedgerError.unknownParameter(String(unknown.key)) }
            if let month = parameters.get("month") {
                return json(.object([("month", .string(month)),
                                     ("items", .array(try await service.run { try views.budgetStatuses(month: month) }.map(ViewJSON.budgetStatus)))]))
            }
            return json(.object([("items", .array(try await service.run { try views.budgets() }.map(ViewJSON.budget)))]))
        }
        // Every recurring rule, with its next occurrence days.
        group.get("recurring") { _, _ in
            json(.object([("items", .array(try await service.run { try views.recurringRuleEntities().map { try LedgerViews.ruleJSON($0) } }))]))
        }
        // Skips one occurrence: {"date": "YYYY-MM-DD"} (an occurrence already created is deleted).
        group.post("recurring/:id/skip") { request, context in
            let uuid = try uuidParameter(context)
            guard case .object(let fields) = try await jsonBody(request, timeout: service.bodyTimeout), fields.count == 1,
                  let date = fields.first(where: { $0.0 == "date" }), case .string(let day) = date.1
            else { throw ValidationError(field: "date", "give the day to skip, {\"date\": \"YYYY-MM-DD\"}") }
            let actor = actor(context)
            return json(try await service.run { try service.ledger.skipOccurrence(rule: uuid, day: day, actor: actor) })
        }
        group.get("summary") { request, _ in
            guard let month = request.uri.queryParameters.get("month") else { throw ValidationError(field: "month", "required, YYYY-MM") }
            let category = request.uri.queryParameters.get("category")
            return json(ViewJSON.summary(try await service.run { try views.summary(month: month, category: category) }))
        }
        group.get("summary/months") { _, _ in
            json(.object([("items", ViewJSON.monthlyTotals(try await service.run { try views.monthlyTotals() }))]))
        }
        group.get("audit/:id") { _, context in
            let id = EntityID(parsing: context.parameters.get("id")?.removingPercentEncoding ?? "")
            let trail = try await service.run { try views.audit(id) }
            guard !trail.events.isEmpty else { throw APIError(.notFound, "not_found", "no events for \(id)") }
            return json(LedgerViews.auditJSON(trail))
        }
        group.get("conflicts") { request, _ in
            let entity = request.uri.queryParameters.get("entity")
            return json(.object([("items", .array(try await service.run { try views.conflicts(entity: entity) }.map(ViewJSON.conflict)))]))
        }
    }
}
