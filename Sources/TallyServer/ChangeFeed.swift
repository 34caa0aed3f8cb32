import Foundation
import HTTPTypes
import Hummingbird
import TallyCore
import TallyLog
import TallyLedger

/// `GET /v1/changes?after=CURSOR` (or a `Last-Event-ID` header): a server-sent event for every
/// event after the cursor, local or replicated, as soon as it is projected; the event's log
/// index is its id, so a client resumes from the last one it saw.
struct ChangeFeed {
    let service: TallyService

    func add(to group: RouterGroup<TallyRequestContext>) {
        group.get("changes") { request, _ in
            let text = request.uri.queryParameters.get("after") ?? request.headers[HTTPField.Name("Last-Event-ID")!] ?? "0"
            guard let after = UInt64(text) else { throw ValidationError(field: "after", "must be a log index (a previous event's id)") }
            let service = self.service
            let body = ResponseBody { writer in
                var cursor = after
                var idle = 0
                try await writer.write(ByteBuffer(string: ": tally change feed\n\n"))
                while !Task.isCancelled {
                    let from = cursor
                    let batch = try await service.run { try service.views.changes(after: from) }
                    for (index, data) in batch {
                        try await writer.write(ByteBuffer(string: "id: \(index)\nevent: change\ndata: \(data)\n\n"))
                        cursor = index
                    }
                    if batch.isEmpty {
                        try await Task.sleep(for: .milliseconds(250))
                        idle += 1
                        // A comment line every ~15 s keeps proxies from closing the stream (and notices a gone client).
                        if idle % 60 == 0 { try await writer.write(ByteBuffer(string: ": keep-alive\n\n")) }
                    } else {
                        idle = 0
                    }
                }
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
        }
    }
}
