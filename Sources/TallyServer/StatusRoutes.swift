import Foundation
import Hummingbird
import TallyCore
import TallyLedger

/// What a client (the web app) asks about itself and this replica: which token it holds and
/// what it may do, and whether this replica and its peers are in step.
struct StatusRoutes {
    func add(to group: APIRoutes) {
        // Who the caller is and what it may do (a read-only caller gets a read-only app): a
        // token's name, or a member's name and role; and the log's head, from where a client
        // follows `/v1/changes`.
        let session = APIOperation(
            "Who the caller is (a token's name, or a signed-in member's name and role), its scopes, and the log's head (where a client starts following /v1/changes).",
            responses: [
                (
                    200,
                    APIResponse.content(
                        "The session.",
                        "application/json: {schema: {type: object, required: [actor, scopes, replicaId, appendedIndex, projectedIndex], properties: {token: {type: string}, member: {type: string}, role: {type: string, enum: [owner, member, read-only]}, actor: {type: string}, scopes: {type: array, items: {type: string, enum: [read, write, replicate]}}, replicaId: {type: string}, ledger: {type: string}, appendedIndex: {type: integer}, projectedIndex: {type: integer}}}}"
                    )
                )
            ])
        group.get("session", session) { _, context in
            let service = try context.service()
            guard let caller = context.caller else { throw APIError(.unauthorized, "unauthorized", "no caller") }
            let (appended, projected) = (service.ledger.appendedIndex, try await service.ledger.read { views in try views.projectedIndex() })
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
        let status = APIOperation(
            "This replica (log head, how far the views are behind, events per origin) and each configured peer: URL without credentials, last attempt, last success, last error, and the events written here since the last success (never a peer's token).",
            responses: [
                (
                    200,
                    APIResponse.content(
                        "The sync status.",
                        "application/json: {schema: {type: object, required: [replicaId, name, appendedIndex, projectedIndex, viewsBehind, origins, peers, missingAttachments], properties: {replicaId: {type: string}, name: {type: string}, appendedIndex: {type: integer}, projectedIndex: {type: integer}, viewsBehind: {type: integer}, missingAttachments: {type: integer}, origins: {type: array, items: {type: object, properties: {origin: {type: string}, events: {type: integer}}}}, peers: {type: array, items: {type: object, required: [name, url, unsent], properties: {name: {type: string}, url: {type: string}, lastAttemptAt: {type: [string, \"null\"]}, lastSuccessAt: {type: [string, \"null\"]}, lastError: {type: [string, \"null\"]}, pulled: {type: integer}, pushed: {type: integer}, unsent: {type: integer}}}}}}}"
                    )
                )
            ])
        group.get("sync/status", status) { _, context in
            let service = try context.service()
            return json(try await service.run { try service.ledger.syncStatusDocument() })
        }
    }
}
