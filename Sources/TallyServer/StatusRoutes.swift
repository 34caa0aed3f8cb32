import Foundation
import Hummingbird
import TallyCore
import TallyLedger

/// What a client (the web app) asks about itself and this replica: which token it holds and
/// what it may do, and whether this replica and its peers are in step.
struct StatusRoutes {
    func add(to group: RouterGroup<TallyRequestContext>) {
        // Who the caller is and what it may do (a read-only caller gets a read-only app): a
        // token's name, or a member's name and role; and the log's head, from where a client
        // follows `/v1/changes`.
        group.get("session") { _, context in
            let service = try context.service()
            guard let caller = context.caller else { throw APIError(.unauthorized, "unauthorized", "no caller") }
            let (appended, projected) = try await service.run { (service.ledger.appendedIndex, try service.views.projectedIndex()) }
            let who: [(String, JSONText)]
            switch caller {
            case .token(let token): who = [("token", .string(token.name))]
            case .member(let member, _): who = [("member", .string(member.name)), ("role", .string(member.role.rawValue))]
            }
            return json(
                .object(
                    who + [
                        ("actor", .string(caller.actor)), ("scopes", .array(caller.scopes.map { .string($0.rawValue) })),
                        ("replicaId", .string(service.directory.identity.replicaId)), ("ledger", .string(service.directory.identity.name)),
                        ("appendedIndex", .int(Int64(clamping: appended))), ("projectedIndex", .int(Int64(clamping: projected))),
                    ]))
        }
        group.get("sync/status") { _, context in
            let service = try context.service()
            return json(try await service.run { try service.ledger.syncStatusDocument() })
        }
    }
}
