import Foundation
import Hummingbird
import TallyCore
import TallyLedger

/// What a client (the web app) asks about itself and this replica: which token it holds and
/// what it may do, and whether this replica and its peers are in step.
struct StatusRoutes {
    func add(to group: RouterGroup<TallyRequestContext>) {
        // The token's name and scopes (a read-only token gets a read-only app), and the log's
        // head, from where a client follows `/v1/changes`.
        group.get("session") { _, context in
            let service = try context.service()
            guard let token = context.token else { throw APIError(.unauthorized, "unauthorized", "no token") }
            let (appended, projected) = try await service.run { (service.ledger.appendedIndex, try service.views.projectedIndex()) }
            return json(
                .object([
                    ("token", .string(token.name)), ("scopes", .array(token.scopes.map { .string($0.rawValue) })),
                    ("replicaId", .string(service.directory.identity.replicaId)),
                    ("appendedIndex", .int(Int64(clamping: appended))), ("projectedIndex", .int(Int64(clamping: projected))),
                ]))
        }
        group.get("sync/status") { _, context in
            let service = try context.service()
            return json(try await service.run { try service.ledger.syncStatusDocument() })
        }
    }
}
