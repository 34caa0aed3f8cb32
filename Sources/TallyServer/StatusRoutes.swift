import Foundation
import Hummingbird
import TallyCore
import TallyLedger
import TallyStore
import TallySync

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
            return try await service.run { try syncStatus(service) }
        }
    }

    /// This replica (its log head and how far the views are behind it, events per origin)
    /// and each configured peer: its URL without credentials, the last attempt and success,
    /// and how many events written since that success it still lacks. Never a peer's token.
    func syncStatus(_ service: TallyService) throws -> Response {
        let appended = service.ledger.appendedIndex
        let projected = try service.views.projectedIndex()
        let vector = service.ledger.vector
        let statuses = Dictionary(try PeerStatusStore(directory: service.directory).all().map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let peers: [JSONText] = try PeerStore(directory: service.directory).all().map { peer in
            let status = statuses[peer.name]
            return .object([
                // A name may be a URL (a peer registered by `tally sync URL`): shown like one.
                ("name", .string(peer.name.contains("://") ? Peer.displayURL(peer.name) : peer.name)), ("url", .string(Peer.displayURL(peer.url))),
                ("lastAttemptAt", ViewJSON.optional(status?.lastAttemptAt)), ("lastSuccessAt", ViewJSON.optional(status?.lastSuccessAt)),
                ("lastError", ViewJSON.optional(status?.lastError)),
                ("pulled", .int(Int64(status?.pulled ?? 0))), ("pushed", .int(Int64(status?.pushed ?? 0))),
                ("unsent", .int(Int64(clamping: status.map { $0.unsent(from: vector) } ?? vector.sequences.values.reduce(0, +)))),
            ])
        }
        let origins: [JSONText] = vector.sequences.sorted { $0.key.description < $1.key.description }.map {
            .object([("origin", .string($0.key.description)), ("events", .int(Int64(clamping: $0.value)))])
        }
        return json(
            .object([
                ("replicaId", .string(service.directory.identity.replicaId)), ("name", .string(service.directory.identity.name)),
                ("appendedIndex", .int(Int64(clamping: appended))), ("projectedIndex", .int(Int64(clamping: projected))),
                ("viewsBehind", .int(Int64(clamping: appended > projected ? appended - projected : 0))),
                ("origins", .array(origins)), ("peers", .array(peers)),
                ("missingAttachments", .int(Int64(try service.views.missingAttachments().count))),
            ]))
    }

}
