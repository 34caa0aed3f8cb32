import Foundation
import Hummingbird
import NIOCore
import TallyCore
import TallyLedger
import TallyLog
import TallySync

/// The replication endpoints (scope `replicate`): this replica's vector, a pull of what the
/// caller lacks, a push of what this replica lacks, and — for `tally sync` run against this
/// data directory — a sync with a configured peer done by the server itself.
struct ReplicationRoutes {
    /// The longest a push may take, its wait for the delivery turn included (408 after; what
    /// was verified by then is kept, and the next sync goes on from there). Shorter than a
    /// sync client's patience for an answer (`ReplicaClient.readTimeout`), so a sync waiting
    /// behind a held turn outlasts it.
    static let pushDeadline = Duration.seconds(300)
    /// How much of a push's body is read before it takes the ledger's delivery turn (`BodyReadAhead`).
    static let pushReadAhead = 1 << 20
    /// How fast the rest must come while the push holds the turn: 80 KiB in each 10 s waited
    /// (8 KiB a second, about 70 kbit/s on the wire; a slower client's push is cut there, and
    /// its next goes on from what was verified: TallyKit tries again).
    static let pushPace = BodyReadAhead.Pace(minimumRate: 8_192, window: .seconds(10))

    /// Who a push may bring events of. A token with the `replicate` scope (a peer replica):
    /// anyone's, as the verifier admits them. A signed-in member (an app's replica syncing with
    /// the member's name and password): only their own, written as `member:NAME` — so a member
    /// cannot put words in another member's mouth, nor in the ledger's own (its recurrences:
    /// the occurrences a member's device makes for its member's rule are recorded as the
    /// member's, `Ledger.occurrenceActor`). Signatures still bind each event to its device.
    static func admit(_ caller: Caller?) -> (@Sendable (Event) -> String?)? {
        guard case .member(let member, _)? = caller else { return nil }
        let own = Ledger.memberActor(member.name)
        return { event in
            event.actor == own ? nil : "written by another name: a member's device pushes only its member's own events (\(own))"
        }
    }

    /// Adds the routes to `group`, the `/v1/replication` group, and the server's own sync to
    /// `serverSync`, the same path for replicate tokens only.
    func add(to group: APIRoutes, serverSync: APIRoutes) {
        group.get("vector", APIOperation(responses: [(200, APIResponse.text("This replica's version vector (replicate scope)."))], errors: [403])) {
            _, context in
            let service = try context.service()
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: service.ledger.vector.json)))
        }
        let pull = APIOperation(
            body: APIBody.jsonSchema(
                "{type: object, required: [origins], properties: {origins: {type: object, propertyNames: {format: uuid}, additionalProperties: {type: integer, minimum: 0, maximum: 18446744073709551615}}}}"
            ),
            responses: [(200, APIResponse.content("The events the caller lacks: length-prefixed encoded events.", "application/octet-stream: {}"))],
            errors: [400, 413, 415])
        group.post("pull", pull) { request, context in
            let service = try context.service()
            let body = try await jsonBody(request, limit: 1 << 20, timeout: service.bodyTimeout)
            let vector: VersionVector
            do { vector = try JSONDecoder().decode(VersionVector.self, from: Data(body.canonicalText.utf8)) } catch {
                throw ValidationError(field: nil, "not a version vector: {\"origins\": {\"<replica id>\": <sequence>}}", kind: .malformed)
            }
            // A run this replica cannot send (no signed head within what a receiver takes) is
            // left out: the answer cannot say so after its records, so the operator is told —
            // once an hour, not at each client's pull every 30 s.
            let (logger, told) = (service.logger, service.leftOutRuns)
            let stream = service.ledger.records(lacking: vector) { run in
                if told.isFirstWithinTheHour("\(run.origin)") {
                    logger.warning("pull: events left out of the answer", metadata: ["reason": "\(run)"])
                }
            }
            return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: ResponseBody(asyncSequence: stream))
        }
        let push = APIOperation(
            "Events the service lacks, verified before anything is appended. With a token of scope replicate: any replica's, as they were signed. With a member's session (owner or member role, X-CSRF-Token): only that member's own events (actor member:NAME — occurrences of a rule the member wrote included, recorded as theirs); any other refuses its batch (422).",
            body: "{required: true, content: {application/octet-stream: {}}}",
            responses: [
                (200, APIResponse.text("{applied, alreadyHeld}")),
                (
                    409,
                    APIResponse.json(
                        "forked_chain: the events hold another chain of an origin than this replica holds; the error's 'origin' names it (the sender may be a restored copy of that replica: docs/TALLYKIT.md)",
                        schema: "Error")
                ),
            ], errors: [400, 408, 415, 422, 429, 507])
        group.post("push", push) { request, context in
            let service = try context.service()
            guard request.headers[.contentType] == "application/octet-stream" else {
                throw APIError(.unsupportedMediaType, "unsupported_media_type", "send events as application/octet-stream records")
            }
            let quota = QuotaAdmission(service)
            do {
                // Within a deadline: a push holds the ledger's delivery turn while its body
                // arrives, and one dripping a byte every few seconds held every other sync's.
                // Its first MiB is read before it takes the turn: one that fits drips alone.
                let (body, member) = (request.body, Self.admit(context.caller))
                let admit: @Sendable (Event) -> String? = { event in member?(event) ?? quota.admit(event) }
                let (applied, held) = try await withDeadline(Self.pushDeadline) {
                    let readAhead = try await BodyReadAhead.reading(body, upTo: Self.pushReadAhead, pace: Self.pushPace)
                    return try await service.ledger.receive(readAhead, from: "push", admit: admit)
                }
                service.metrics.replicated(applied, from: "push:" + (context.caller?.actor ?? "?"))
                try await Self.storeFiles(context)
                return json(.object([("applied", .int(Int64(applied))), ("alreadyHeld", .int(Int64(held)))]))
            } catch let failure as ReceiveFailure {
                service.metrics.replicated(failure.applied, from: "push:" + (context.caller?.actor ?? "?"))
                if failure.applied > 0 { try? await Self.storeFiles(context) }  // the refusal is the answer
                // A refusal says itself how many of this push's events were kept before it.
                let cause = Ledger.failure(failure.cause, keeping: failure.applied)
                if var exceeded = quota.exceeded {  // a quota reached part-way: 429 or 507, as any write over it
                    if failure.applied > 0 { exceeded.message += " (of this push, the \(failure.applied) events received before it were kept)" }
                    throw exceeded
                }
                var error = APIError.from(cause)
                // A refusal keeps its 4xx; a broken invariant on this side stays a 500 (logged by ErrorMiddleware).
                if error.status != .internalServerError, !["forked_chain", "unreadable_request", "body_timeout", "body_too_slow"].contains(error.code) {
                    error.code = "rejected"
                }
                if failure.applied > 0, !(cause is SyncRejection) {
                    error.message += " (of this push, the \(failure.applied) events received before it were kept)"
                }
                throw error
            } catch {
                // Cut off by its deadline: what was verified by then is kept (the receive ends
                // before the deadline's answer is thrown), its pins with it.
                try? await Self.storeFiles(context)
                throw error
            }
        }
        let sync = APIOperation(
            body: APIBody.jsonSchema(
                #"{type: object, required: [peer], additionalProperties: false, properties: {peer: {type: string, description: "a peer configured with 'tally peers add'; the service never syncs with a URL a client names"}}}"#
            ), responses: [(200, APIResponse.text("{pulled, pushed, alreadyHeld, newConflicts, newMerges, blobsFetched, blobsSent, leftOut?}"))],
            errors: [400, 403, 404, 502, 507])
        // The server's own syncs with its peers: a replicate token's, never a member's (who
        // may reach the other replication routes to sync an app's replica).
        serverSync.post("sync", sync) { request, context in
            let service = try context.service()
            guard case .object(let fields) = try await jsonBody(request, timeout: service.bodyTimeout) else {
                throw ValidationError(field: nil, "the body must be a JSON object", kind: .malformed)
            }
            func field(_ name: String) -> String? {
                if case .string(let text)? = fields.first(where: { $0.0 == name })?.1 { return text }
                return nil
            }
            // Only configured peers (`tally peers add`): the service never fetches a URL a client
            // names, so a token cannot turn it into a probe of the network it sits in.
            guard fields.count == 1, let name = field("peer") else {
                throw ValidationError(field: "peer", "give a configured peer's name, {\"peer\": NAME} (tally peers add NAME URL --token T)")
            }
            guard let peer = try Ledger.peer(named: name, of: service.directory) else {
                throw APIError(.notFound, "not_found", "no peer named '\(name)' (tally peers add)")
            }
            let report: Ledger.SyncReport
            do {
                report = try await service.ledger.sync(withPeer: peer)
            } catch let error as SyncRejection {
                throw error
            } catch let error as LogError {
                throw error
            } catch let error as any AttachmentQuotaEnding {
                // The events went both ways, their pins too. 507 when the peer's blobs would pass
                // this ledger's attachment quota, 502 in words when ours would pass the peer's.
                try await Self.storeFiles(context)
                throw error
            } catch {
                // The peer could not be reached or answered nonsense: its failure, not ours. Its
                // words (a decoding error quotes them) stay out of the answer and the log.
                service.logger.warning("sync failed", metadata: ["peer.id": "\(peer.name)", "error.type": "\(type(of: error))"])
                throw APIError(.badGateway, "peer_failed", "the sync with \(peer.name) failed: it could not be reached, or did not answer as a Tally replica")
            }
            service.metrics.replicated(report.pulled, from: peer.name)
            try await Self.storeFiles(context)
            return json(report.json)
        }
    }

    /// On a cluster, after a push or a sync: the ledger's changed files stored in PostgreSQL
    /// before the answer — a new origin's pinned key, or a rotation's (`log/origin-keys.json`),
    /// went only with the next renewal, and an owner killed before it left the next one the
    /// events with the old pin, which refused that origin's every later head. After every one,
    /// not only one that brought events: one answered 503 because its files could not be
    /// stored is sent again, and finds its events held. (Elsewhere, nothing: no `afterChange`.)
    static func storeFiles(_ context: TallyRequestContext) async throws {
        try await context.credentials?.afterChange?()
    }
}
