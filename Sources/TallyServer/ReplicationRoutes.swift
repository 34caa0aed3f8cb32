import Foundation
import Hummingbird
import NIOCore
import TallyCore
import TallyLog
import TallyStore
import TallySync

/// The replication endpoints (scope `replicate`): this replica's vector, a pull of what the
/// caller lacks, a push of what this replica lacks, and — for `tally sync` run against this
/// data directory — a sync with a configured peer done by the server itself.
struct ReplicationRoutes {
    let service: TallyService

    func add(to group: RouterGroup<TallyRequestContext>) {
        group.get("replication/vector") { _, _ in
            let vector = try await service.run { VersionVector(head: service.writer.head, excluding: service.directory.identity.localOnlyOrigin) }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: vector.json)))
        }
        group.post("replication/pull") { request, _ in
            let body = try await jsonBody(request, limit: 1 << 20)
            let vector: VersionVector
            do { vector = try JSONDecoder().decode(VersionVector.self, from: Data(body.canonicalText.utf8)) } catch {
                throw APIError(.badRequest, "invalid_body", "not a version vector: {\"origins\": {\"<replica id>\": <sequence>}}")
            }
            let stream = recordStream(from: service.directory, lacking: vector, sent: Counter())
            return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: ResponseBody(asyncSequence: stream))
        }
        group.post("replication/push") { request, context in
            guard request.headers[.contentType] == "application/octet-stream" else {
                throw APIError(.unsupportedMediaType, "unsupported_media_type", "send events as application/octet-stream records")
            }
            var receiver = StreamReceiver(writer: service.writer, source: "push", maximumSkewMillis: service.maximumSkewMillis)
            var failure: (any Error)?
            do {
                for try await piece in request.body { try receiver.feed(piece.readableBytesView) }
                try receiver.finish()
            } catch {
                failure = error
                receiver.stop()  // keep what was verified before the break
            }
            _ = try await service.run { try service.projector.catchUp() }
            service.metrics.replicated(receiver.applied, from: "push:" + (context.token?.name ?? "?"))
            if let failure {
                let error = APIError.from(failure)
                throw APIError(error.status == .internalServerError ? .unprocessableContent : error.status, "rejected",
                               "\(error.message) (\(receiver.applied) events before it were applied)")
            }
            return json(.object([("applied", .int(Int64(receiver.applied))), ("alreadyHeld", .int(Int64(receiver.alreadyHeld)))]))
        }
        group.post("replication/sync") { request, _ in
            guard case .object(let fields) = try await jsonBody(request) else { throw APIError(.badRequest, "invalid_body", "a JSON object") }
            func field(_ name: String) -> String? {
                if case .string(let text)? = fields.first(where: { $0.0 == name })?.1 { return text }
                return nil
            }
            let peer: Peer
            if let name = field("peer") {
                guard let configured = try PeerStore(directory: service.directory).all().first(where: { $0.name == name }) else {
                    throw APIError(.notFound, "not_found", "no peer named '\(name)' (tally peers add)")
                }
                peer = configured
            } else if let url = field("url"), let token = field("token") {
                guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme), parsed.host?.isEmpty == false else {
                    throw EntityInput.invalid("url", "must be an http:// or https:// URL with a host")
                }
                peer = Peer(name: url, url: url, token: token)
            } else {
                throw EntityInput.invalid("peer", "give a configured peer's name, or url and token")
            }
            let report: SyncReport
            do {
                report = try await SyncRunner.sync(writer: service.writer, projector: service.projector, directory: service.directory,
                                                   peer: ReplicaClient(baseURL: peer.url, token: peer.token), maximumSkewMillis: service.maximumSkewMillis)
            } catch let error as SyncRejection {
                throw error
            } catch let error as LogError {
                throw error
            } catch {
                // The peer could not be reached or answered nonsense: its failure, not ours.
                throw APIError(.badGateway, "peer_failed", "the sync with \(peer.name) failed: \(error)")
            }
            service.metrics.replicated(report.pulled, from: peer.name)
            return json(SyncReportJSON.render(report))
        }
    }
}

/// A sync report as JSON (shared by the endpoint and `tally sync --json`).
public enum SyncReportJSON {
    public static func render(_ report: SyncReport) -> JSONText {
        .object([("pulled", .int(Int64(report.pulled))), ("pushed", .int(Int64(report.pushed))), ("alreadyHeld", .int(Int64(report.alreadyHeld))),
                 ("newConflicts", .int(Int64(report.newConflicts))), ("newMerges", .int(Int64(report.newMerges)))])
    }
}
