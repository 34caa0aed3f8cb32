import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import TallyCore
import TallyLedger
import TallyLog
@testable import TallyServer
import TallySync
import TallyTestSupport

/// A replica with a running (in-process) service and three tokens.
struct ServerFixture {
    let folder = TemporaryDirectory("tally-server")
    let service: TallyService
    let readWrite: String, readOnly: String, replicate: String

    init() throws {
        let directory = try DataDirectory.create(path: folder.file("data"), name: "server")
        service = try TallyService(directory: directory, logger: Logger(label: "test"))
        readWrite = try service.tokens.create(name: "app", scopes: [.read, .write])
        readOnly = try service.tokens.create(name: "viewer", scopes: [.read])
        replicate = try service.tokens.create(name: "peer", scopes: [.replicate])
    }

    func test(_ mode: TestingSetup = .router, _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let app = Application(router: buildRouter(service), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(mode) { client in try await body(client) }
    }

    func logSize() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: service.directory.logPath).filter { $0.hasSuffix(".tseg") }
            .reduce(0) { $0 + ((try FileManager.default.attributesOfItem(atPath: service.directory.logPath + "/" + $1)[.size] as? Int) ?? 0) }
    }
}

extension TestClientProtocol {
    func send(_ method: HTTPRequest.Method, _ uri: String, token: String?, json: String? = nil, contentType: String = "application/json") async throws
        -> TestResponse
    {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        if json != nil { headers[.contentType] = contentType }
        return try await execute(uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
    }

    /// POSTs `body` to `path`, expects 201 Created, and returns the new entity's id.
    func create(_ path: String, _ body: String, token: String?, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let response = try await send(.post, path, token: token, json: body)
        #expect(response.status == .created, "\(path) \(body): \(String(buffer: response.body))", sourceLocation: sourceLocation)
        return response.object["id"] as? String ?? ""
    }
}

extension TestResponse {
    var object: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]) ?? [:] }
    var errorCode: String? { (object["error"] as? [String: Any])?["code"] as? String }
}

@Suite struct ServerTests {
    @Test func healthNeedsNoTokenAndEverythingElseDoes() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let response1 = try await client.send(.get, "/health", token: nil)
            #expect(response1.status == .ok)
            let anonymous = try await client.send(.get, "/v1/expenses", token: nil)
            #expect(anonymous.status == .unauthorized && anonymous.errorCode == "unauthorized")
            let response2 = try await client.send(.get, "/v1/expenses", token: "tly_wrong")
            #expect(response2.status == .unauthorized)
            let readOnlyWrite = try await client.send(.post, "/v1/expenses", token: fixture.readOnly, json: #"{"amount": 100}"#)
            #expect(readOnlyWrite.status == .forbidden && readOnlyWrite.errorCode == "forbidden")
            let response3 = try await client.send(.get, "/v1/expenses", token: fixture.replicate)
            #expect(response3.status == .forbidden)
            let response4 = try await client.send(.get, "/v1/expenses", token: fixture.readOnly)
            #expect(response4.status == .ok)
        }
    }

    @Test func aRevokedTokenIsRefusedWithoutARestart() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let response5 = try await client.send(.get, "/v1/todos", token: fixture.readOnly)
            #expect(response5.status == .ok)
            let revoked = try fixture.service.tokens.revoke(name: "viewer")
            #expect(revoked)
            let response6 = try await client.send(.get, "/v1/todos", token: fixture.readOnly)
            #expect(response6.status == .unauthorized)
        }
    }

    @Test func entitiesCanBeCreatedReadPatchedListedAndDeleted() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let token = fixture.readWrite
            let category = try await client.send(.post, "/v1/categories", token: token, json: #"{"name": "Food"}"#)
            #expect(category.status == .created)
            let categoryID = category.object["id"] as! String
            let created = try await client.send(
                .post, "/v1/expenses", token: token,
                json: """
                    {"amount": 12000, "date": "2026-03-01T12:00:00+09:00", "categoryId": "\(categoryID)", "tags": ["work"], "memo": "김밥"}
                    """)
            #expect(created.status == .created)
            let id = created.object["id"] as! String
            #expect(created.object["categoryName"] as? String == "Food")
            let patched = try await client.send(.patch, "/v1/expenses/\(id)", token: token, json: #"{"amount": 13000}"#)
            #expect(patched.status == .ok && patched.object["amount"] as? Int == 13000 && patched.object["memo"] as? String == "김밥")
            let list = try await client.send(.get, "/v1/expenses?month=2026-03&category=\(categoryID)", token: token)
            #expect((list.object["items"] as? [Any])?.count == 1)
            let summary = try await client.send(.get, "/v1/summary?month=2026-03", token: token)
            #expect(((summary.object["totals"] as? [[String: Any]])?.first?["expense"] as? Int) == 13000)
            let audit = try await client.send(.get, "/v1/audit/\(id)", token: token)
            #expect((audit.object["events"] as? [[String: Any]])?.map { $0["actor"] as? String } == ["token:app", "token:app"])
            let response7 = try await client.send(.delete, "/v1/expenses/\(id)", token: token)
            #expect(response7.status == .noContent)
            let response8 = try await client.send(.get, "/v1/expenses/\(id)", token: token)
            #expect(response8.status == .notFound)
            let response9 = try await client.send(.delete, "/v1/expenses/\(id)", token: token)
            #expect(response9.status == .notFound)
            let setting = try await client.send(.put, "/v1/settings/theme", token: token, json: #"{"value": {"b": 1, "a": "dark"}}"#)
            #expect(setting.status == .ok)
            #expect(String(buffer: setting.body).contains(#""value":{"a":"dark","b":1}"#))
        }
    }

    @Test func pagingWithACursorVisitsEveryExpenseOnce() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            for day in 1...7 {
                _ = try await client.send(.post, "/v1/expenses", token: fixture.readWrite, json: #"{"amount": \#(day), "date": "2026-03-0\#(day)"}"#)
            }
            var seen: [Int] = []
            var cursor: String? = nil
            repeat {
                let page = try await client.send(.get, "/v1/expenses?limit=3" + (cursor.map { "&cursor=\($0)" } ?? ""), token: fixture.readOnly)
                seen += (page.object["items"] as! [[String: Any]]).map { $0["amount"] as! Int }
                cursor = page.object["nextCursor"] as? String
            } while cursor != nil
            #expect(seen == [7, 6, 5, 4, 3, 2, 1])
        }
    }

    /// Every class of bad input gets a 4xx with a JSON error and changes nothing.
    @Test func badInputIsRefusedAndChangesNothing() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let token = fixture.readWrite
            let existing = try await client.send(.post, "/v1/expenses", token: token, json: #"{"amount": 1}"#).object["id"] as! String
            let before = try fixture.logSize()
            let cases: [(HTTPRequest.Method, String, String?, String, HTTPResponse.Status)] = [
                (.post, "/v1/expenses", #"{"amount": "#, "application/json", .badRequest),  // malformed
                (.post, "/v1/expenses", #"{"amount": 1, "colour": "red"}"#, "application/json", .badRequest),  // unknown field
                (.post, "/v1/expenses", #"{"amount": 1, "amount": 2}"#, "application/json", .badRequest),  // duplicate key
                (.post, "/v1/expenses", #"{"amount": "12"}"#, "application/json", .badRequest),  // wrong type
                (.post, "/v1/expenses", #"{"amount": 12.5}"#, "application/json", .badRequest),  // fractional
                (.post, "/v1/expenses", #"{"amount": 1e3}"#, "application/json", .badRequest),  // exponent
                (.post, "/v1/expenses", #"{"amount": -5}"#, "application/json", .badRequest),  // negative
                (.post, "/v1/expenses", #"{"amount": 99999999999999999999}"#, "application/json", .badRequest),  // overflow
                (.post, "/v1/expenses", #"{"amount": 1, "categoryId": "nope"}"#, "application/json", .badRequest),
                (.post, "/v1/expenses", #"{"amount": 1, "date": "2026-02-30"}"#, "application/json", .badRequest),
                (.post, "/v1/expenses", #"{"amount": 1}"#, "text/plain", .unsupportedMediaType),
                (.post, "/v1/expenses", #"[1, 2]"#, "application/json", .badRequest),
                (.post, "/v1/expenses", "{\"memo\": \"" + String(repeating: "x", count: 2 << 20) + "\"}", "application/json", .contentTooLarge),
                (.patch, "/v1/expenses/not-a-uuid", #"{"amount": 1}"#, "application/json", .badRequest),
                (.patch, "/v1/expenses/\(existing)", #"{}"#, "application/json", .badRequest),
                (.patch, "/v1/expenses/8b1a9953-c461-4b3e-9f5c-1d6a3b1e2f00", #"{"amount": 1}"#, "application/json", .notFound),
                (.post, "/v1/expenses", #"{"id": "\#(existing)", "amount": 1}"#, "application/json", .conflict),
                (.put, "/v1/settings/theme", #"{"value": 1, "scope": "galaxy"}"#, "application/json", .badRequest),
                (.get, "/v1/expenses?month=March", nil, "application/json", .badRequest),
                (.get, "/v1/expenses?limit=0", nil, "application/json", .badRequest),
                (.get, "/v1/changes?after=-1", nil, "application/json", .badRequest),
                (.get, "/v1/nowhere", nil, "application/json", .notFound),
                (.trace, "/v1/expenses", nil, "application/json", .methodNotAllowed),
                (.patch, "/v1/expenses/\(existing)", #"{"id": "\(existing)", "amount": 1}"#, "application/json", .badRequest),  // id only in the path
                (.put, "/v1/settings/_private", #"{"value": 1}"#, "application/json", .badRequest),  // key must start with a letter
                (.put, "/v1/settings/a-b", #"{"value": 1}"#, "application/json", .badRequest),  // no '-' (a UUID never is a key)
                (.post, "/v1/expenses", #"{"amount": 1, "currency": "AAA"}"#, "application/json", .badRequest),  // not ISO 4217
                (.post, "/v1/expenses", #"{"amount": 1, "payee": 7}"#, "application/json", .badRequest),  // payee: wrong type
                (.post, "/v1/expenses", #"{"amount": 1, "date": "2026-01-01T00:00+18:59"}"#, "application/json", .badRequest),  // offset beyond ±18h
                (.post, "/v1/expenses", #"{"amount": 1, "date": "0000-12-31T00:00Z"}"#, "application/json", .badRequest),  // year 0
                (.put, "/v1/settings/theme", #"{"value": "\u+041"}"#, "application/json", .badRequest),  // not a JSON escape
                (
                    .post, "/v1/expenses", "{\"amount\": 1, \"payee\": \"" + String(repeating: "가", count: Limits.maxShortTextLength + 1) + "\"}",
                    "application/json", .badRequest
                ),  // payee: too long
                (.post, "/v1/expenses", #"{"amount": 1, "payee": "a\u0007b"}"#, "application/json", .badRequest),  // payee: control character
                (.post, "/v1/expenses", #"{"amount": 1, "payee": "\u202eevil\u202dRTL"}"#, "application/json", .badRequest),  // unpaired override
                (.post, "/v1/expenses", #"{"amount": 1, "tags": ["ok", "x\u2067"]}"#, "application/json", .badRequest),  // unclosed isolate
                (.post, "/v1/categories", #"{"name": "Food\u202e"}"#, "application/json", .badRequest),
                (.post, "/v1/todos", #"{"title": "run\u202c"}"#, "application/json", .badRequest),
                (.get, "/v1/expenses?payee=x&colour=red", nil, "application/json", .badRequest),  // unknown parameter
                (.get, "/v1/expenses?limit=1001", nil, "application/json", .badRequest),  // one page limit
                (.get, "/v1//replication/vector", nil, "application/json", .badRequest),  // empty segment
            ]
            for (method, uri, body, type, status) in cases {
                let response = try await client.send(method, uri, token: token, json: body, contentType: type)
                #expect(response.status == status, "\(method) \(uri) \(body?.prefix(60) ?? ""): \(response.status)")
                #expect(response.errorCode != nil, "\(method) \(uri): a JSON error body")
            }
            let after = try fixture.logSize()
            #expect(after == before, "nothing was appended")
        }
    }

    /// The payee: written, validated, listed, filtered, summarised, and shown in the OpenAPI document.
    @Test func aPayeeIsWrittenFilteredAndSummarised() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let token = fixture.readWrite
            for (amount, payee) in [(4_500, "스타벅스"), (3_000, "스타벅스"), (12_000, "이마트"), (800, " 편의점 ")] {
                let created = try await client.send(
                    .post, "/v1/expenses", token: token,
                    json: #"{"amount": \#(amount), "payee": "\#(payee)", "date": "2026-03-05T12:00:00+09:00"}"#)
                #expect(created.status == .created)
                #expect(created.object["payee"] as? String == payee.trimmingCharacters(in: .whitespaces), "stored trimmed")
            }
            let filtered = try await client.send(.get, "/v1/expenses?payee=%EC%8A%A4%ED%83%80%EB%B2%85%EC%8A%A4", token: token)
            let items = filtered.object["items"] as? [[String: Any]] ?? []
            #expect(items.count == 2 && items.allSatisfy { $0["payee"] as? String == "스타벅스" })
            let summary = try await client.send(.get, "/v1/summary?month=2026-03", token: token)
            let top = summary.object["topPayees"] as? [[String: Any]] ?? []
            #expect(top.map { $0["payee"] as? String } == ["이마트", "스타벅스", "편의점"], "largest first")
            #expect(top.first { $0["payee"] as? String == "스타벅스" }?["amount"] as? Int == 7_500)
            let document = String(buffer: try await client.send(.get, "/openapi.yaml", token: token).body)
            #expect(document.contains("payee: {type: [string, \"null\"], maxLength: \(Limits.maxShortTextLength)"))
            #expect(document.contains("{name: payee, in: query"))
        }
    }

    @Test func aChallengesStreaksShowInTheListTheEntityAndTheSummary() async throws {
        let fixture = try ServerFixture()
        let today = DateTime.nowHere
        let start = DateTime(epochMillis: today.epochMillis - 2 * 86_400_000, offsetMinutes: today.offsetMinutes).description.prefix(10)
        try await fixture.test { client in
            let created = try await client.send(
                .post, "/v1/todos", token: fixture.readWrite,
                json: #"{"title": "No snacks", "isChallenge": true, "startDate": "\#(start)", "checks": [true, true, false, false]}"#)
            #expect(created.status == .created)
            let streaks = created.object["streaks"] as? [String: Any]
            #expect(streaks?["current"] as? Int == 2, "today still open: the run to yesterday")
            #expect(streaks?["longest"] as? Int == 2 && streaks?["completionRate"] as? Double == 66.67)
            let plain = try await client.send(.post, "/v1/todos", token: fixture.readWrite, json: #"{"title": "Call the bank"}"#)
            #expect(plain.object["streaks"] is NSNull, "not a challenge")
            let list = try await client.send(.get, "/v1/todos", token: fixture.readOnly)
            #expect((list.object["items"] as? [[String: Any]] ?? []).compactMap { $0["streaks"] as? [String: Any] }.count == 1)
            let summary = try await client.send(.get, "/v1/summary?month=\(today.localMonth)", token: fixture.readOnly)
            let challenges = summary.object["challenges"] as? [[String: Any]] ?? []
            #expect(challenges.count == 1 && challenges.first?["title"] as? String == "No snacks")
            #expect((challenges.first?["streaks"] as? [String: Any])?["current"] as? Int == 2)
        }
    }

    @Test func headIsAnsweredAsGetWithoutTheBody() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let created = try await client.send(.post, "/v1/expenses", token: fixture.readWrite, json: #"{"amount": 4200, "date": "2026-03-01"}"#)
            let id = try #require(created.object["id"] as? String)
            for uri in ["/v1/expenses", "/v1/expenses/\(id)", "/v1/summary?month=2026-03", "/v1/categories", "/health"] {
                let get = try await client.send(.get, uri, token: fixture.readOnly)
                let head = try await client.send(.head, uri, token: fixture.readOnly)
                #expect(get.status == .ok && head.status == .ok, "HEAD \(uri): \(head.status)")
                #expect(head.body.readableBytes == 0 && get.body.readableBytes > 0, "HEAD \(uri)")
                #expect(head.headers[.contentType] == get.headers[.contentType], "HEAD \(uri)")
                #expect(head.headers[.contentLength] == String(get.body.readableBytes), "HEAD \(uri): the GET's length")
            }
            #expect(try await client.send(.head, "/v1/expenses/8b1a9953-c461-4b3e-9f5c-1d6a3b1e2f00", token: fixture.readOnly).status == .notFound)
            #expect(try await client.send(.head, "/v1/expenses", token: nil).status == .unauthorized)
            #expect(try await client.send(.head, "/v1/expenses?month=March", token: fixture.readOnly).status == .badRequest)
        }
    }

    /// What the review of the route changes found (issue 30): each stays fixed.
    @Test func headsTrailingSlashesAndUnmatchedPathsBehave() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            // A HEAD of the change feed takes none of the token's feeds (the GET's would never
            // be given back: a HEAD runs no body), and checks its cursor as the GET does.
            for _ in 0..<6 {
                let head = try await client.send(.head, "/v1/changes?after=0", token: fixture.readWrite)
                #expect(head.status == .ok && head.headers[.contentType] == "text/event-stream" && head.body.readableBytes == 0)
            }
            #expect(try fixture.service.openChangeFeeds(token: "app") == 0)
            #expect(try await client.send(.head, "/v1/changes?after=x", token: fixture.readWrite).status == .badRequest)
            #expect(try await client.send(.head, "/v1/changes", token: nil).status == .unauthorized)
            // The root and a trailing slash are the paths the router serves there.
            let root = try await client.send(.post, "/", token: nil)
            #expect(root.status == .methodNotAllowed && root.headers[.allow] == "GET, HEAD")
            let slash = try await client.send(.put, "/v1/expenses/", token: fixture.readWrite)
            #expect(slash.status == .methodNotAllowed && slash.headers[.allow] == "GET, HEAD, POST")
            #expect(try await client.send(.get, "/health/", token: nil).status == .ok, "public with a trailing slash too")
            // The scheme's name is case-insensitive.
            let lower = try await client.execute(uri: "/v1/expenses", method: .get, headers: [.authorization: "bearer \(fixture.readOnly)"], body: nil)
            #expect(lower.status == .ok)
            // What no route matched is one series, whatever stopped it.
            _ = try await client.send(.get, "/nowhere", token: nil)
            _ = try await client.send(.get, "/nowhere", token: fixture.readOnly)
            _ = try await client.send(.put, "/v1/expenses", token: fixture.readWrite)
            let metrics = String(buffer: try await client.send(.get, "/metrics", token: fixture.readOnly).body)
            #expect(metrics.contains(#"route="unmatched""#) && !metrics.contains("NotFound"), "\(metrics.prefix(2_000))")
        }
    }

    @Test func otherMethodsGet405WithTheServedAllowList() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let cases: [(HTTPRequest.Method, String, String)] = [
                (.put, "/health", "GET, HEAD"),
                (.options, "/v1/expenses/8b1a9953-c461-4b3e-9f5c-1d6a3b1e2f00", "DELETE, GET, HEAD, PATCH"),
                (.post, "/v1/audit/8b1a9953-c461-4b3e-9f5c-1d6a3b1e2f00", "GET, HEAD"),
                (.patch, "/v1/settings/theme", "DELETE, GET, HEAD, PUT"),
                (.delete, "/v1/expenses", "GET, HEAD, POST"),
                (.get, "/v1/replication/blobs/missing", "POST"),  // a literal segment before a parameter, as the router matches
            ]
            for (method, uri, allow) in cases {
                let response = try await client.send(method, uri, token: fixture.readWrite)
                #expect(response.status == .methodNotAllowed, "\(method) \(uri)")
                #expect(response.headers[.allow] == allow, "\(method) \(uri): \(response.headers[.allow] ?? "no Allow")")
                #expect(response.errorCode == "method_not_allowed")
                // Without a token, or with an unknown one, the path's methods are not told.
                for token in [nil, "not-a-token"] {
                    let refused = try await client.send(method, uri, token: token)
                    #expect(refused.status == (uri == "/health" ? .methodNotAllowed : .unauthorized), "\(method) \(uri) with token \(token ?? "none")")
                    #expect(uri == "/health" || refused.headers[.allow] == nil)
                }
            }
        }
    }

    @Test func aSyncRequestWithABadOrDeadPeerIsTheCallersOrThePeersFaultNeverA500() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            try PeerStore(directory: fixture.service.directory).add(Peer(name: "dead", url: "http://127.0.0.1:9", token: "t"))  // port 9: nothing listens
            let cases: [(String, HTTPResponse.Status, String)] = [
                // The service never fetches a URL a client names (no SSRF): only configured peers.
                (#"{"url": "http://169.254.169.254/latest/meta-data", "token": "t"}"#, .badRequest, "invalid_field"),
                (#"{"url": "ftp://example.org", "token": "t"}"#, .badRequest, "invalid_field"),
                (#"{"peer": "dead", "url": "http://127.0.0.1:1"}"#, .badRequest, "invalid_field"),
                (#"{"token": "t"}"#, .badRequest, "invalid_field"),
                (#"{"peer": "nobody"}"#, .notFound, "not_found"),
                (#"{"peer": "dead"}"#, .badGateway, "peer_failed"),
            ]
            for (body, status, code) in cases {
                let response = try await client.send(.post, "/v1/replication/sync", token: fixture.replicate, json: body)
                #expect(response.status == status, "\(body): \(response.status)")
                #expect(response.errorCode == code, "\(body)")
            }
        }
    }

    /// A hostile peer's answer never reaches the caller (its body is not echoed) and cannot send
    /// the service elsewhere (redirects are not followed).
    @Test func aSyncNeverEchoesAPeersBodyNorFollowsItsRedirects() async throws {
        let fixture = try ServerFixture()
        let hostile = Router()
        hostile.post("/v1/replication/pull") { request, _ in
            if request.headers[.authorization] == "Bearer echo" {
                return Response(
                    status: .internalServerError, body: .init(byteBuffer: ByteBuffer(string: #"{"error": {"code": "SECRET BODY", "message": "SECRET BODY"}}"#)))
            }
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer()))
        }
        hostile.get("/v1/replication/vector") { request, _ in
            if request.headers[.authorization] == "Bearer badvector" {  // a decoding error would quote this
                return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: #"{"origins": {"SECRET <script>\nlevel=error": 1}}"#)))
            }
            return Response(status: .found, headers: [.location: "http://127.0.0.1:9/stolen"])
        }
        let app = Application(router: hostile, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { peerClient in
            let url = "http://127.0.0.1:\(peerClient.port!)"
            let peers = PeerStore(directory: fixture.service.directory)
            try peers.add(Peer(name: "echo", url: url, token: "echo"))
            try peers.add(Peer(name: "redirect", url: url, token: "redirect"))
            try peers.add(Peer(name: "badvector", url: url, token: "badvector"))
            try await fixture.test { client in
                let echoed = try await client.send(.post, "/v1/replication/sync", token: fixture.replicate, json: #"{"peer": "echo"}"#)
                #expect(echoed.status == .unprocessableContent && echoed.errorCode == "rejected")
                #expect(!String(buffer: echoed.body).contains("SECRET"), "\(String(buffer: echoed.body))")
                let redirected = try await client.send(.post, "/v1/replication/sync", token: fixture.replicate, json: #"{"peer": "redirect"}"#)
                #expect(String(buffer: redirected.body).contains("302"), "the redirect is refused, not followed")
                #expect(!String(buffer: redirected.body).contains("127.0.0.1"), "the peer is named, its URL not shown")
                let quoted = try await client.send(.post, "/v1/replication/sync", token: fixture.replicate, json: #"{"peer": "badvector"}"#)
                #expect(quoted.status == .badGateway && !String(buffer: quoted.body).contains("SECRET"), "\(String(buffer: quoted.body))")
            }
        }
    }

    /// The document describes every route the router serves, with its methods, and no other:
    /// the router's own list (`Router.routes`) against the document's `paths:`.
    @Test func theOpenAPIDocumentDescribesEveryRouteAndNoOther() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let anonymous = try await client.send(.get, "/openapi.yaml", token: nil)
            #expect(anonymous.status == .unauthorized)
            let document = String(buffer: try await client.send(.get, "/openapi.yaml", token: fixture.readOnly).body)
            #expect(document == OpenAPIDocument.yaml)
        }
        var served: [String: Set<String>] = [:]
        for route in buildRouter(fixture.service).routes {
            let path = route.path.description
            // The web app's files are not API routes; HEAD goes with every GET.
            guard path.hasPrefix("/v1/") || ["/health", "/metrics", "/openapi.yaml"].contains(path), route.method != .head else { continue }
            served[path, default: []].insert(route.method.rawValue)
        }
        var documented: [String: Set<String>] = [:]
        var path: String?
        for line in OpenAPIDocument.yaml.split(separator: "\n").drop(while: { $0 != "paths:" }).dropFirst() {
            if line.hasPrefix("  /") {
                path = String(line.dropFirst(2).dropLast())
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "), let method = line.dropFirst(4).split(separator: ":").first,
                ["get", "post", "put", "patch", "delete"].contains(method)
            {
                documented[path, default: []].insert(method.uppercased())
            } else if !line.hasPrefix(" ") {
                break
            }
        }
        #expect(served.count > 30)
        for (path, methods) in served {
            #expect(documented[path] == methods, "\(path): served \(methods.sorted()), documented \(documented[path]?.sorted() ?? [])")
        }
        for path in documented.keys where served[path] == nil { #expect(Bool(false), "\(path) is documented but not served") }
    }

    /// The generated field lists sit at the indentation of the hand-written `id` beside them
    /// (they did not once, and the document stopped being YAML at all).
    @Test func theWritableSchemasAreIndentedAsYAMLNeeds() async throws {
        for schema in ["ExpenseCreate:", "CategoryCreate:", "TodoCreate:"] where OpenAPIDocument.yaml.contains(schema) {
            let lines = OpenAPIDocument.yaml.components(separatedBy: "\n")
            guard let start = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == schema }),
                let properties = lines[start...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "properties:" })
            else { continue }
            let indent = lines[properties].prefix { $0 == " " }.count + 2
            for line in lines[(properties + 1)...].prefix(while: { $0.prefix { $0 == " " }.count > indent - 2 }) {
                #expect(line.prefix { $0 == " " }.count == indent, "\(schema) \(line.prefix(60))")
            }
        }
    }

    @Test func anIdempotencyKeyMakesARetryReturnTheSameEntity() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            var headers: HTTPFields = [.authorization: "Bearer \(fixture.readWrite)", .contentType: "application/json"]
            headers[HTTPField.Name("Idempotency-Key")!] = "order-7"
            let first = try await client.execute(uri: "/v1/expenses", method: .post, headers: headers, body: ByteBuffer(string: #"{"amount": 500}"#))
            let retry = try await client.execute(uri: "/v1/expenses", method: .post, headers: headers, body: ByteBuffer(string: #"{"amount": 500}"#))
            #expect(first.status == .created && retry.status == .ok)
            #expect(first.object["id"] as? String == retry.object["id"] as? String)
            #expect(retry.headers[HTTPField.Name("Idempotent-Replayed")!] == "true")
            // A "retry" that could not have made the entity (no amount) is refused as a first
            // request would be, not answered with the entity the key made.
            let lacking = try await client.execute(uri: "/v1/expenses", method: .post, headers: headers, body: ByteBuffer(string: #"{"payee": "x"}"#))
            #expect(lacking.status == .badRequest && lacking.errorCode == "invalid_field", "\(lacking.status)")
            // A "retry" with other values is refused (422), naming the entity the key made and a
            // field that differs — also one the first request did not send — never answered
            // with an entity that does not say what it sent.
            let firstID = first.object["id"] as? String
            for body in [#"{"amount": 600}"#, #"{"amount": 500, "memo": "more"}"#] {
                let other = try await client.execute(uri: "/v1/expenses", method: .post, headers: headers, body: ByteBuffer(string: body))
                let error = other.object["error"] as? [String: Any] ?? [:]
                #expect(other.status == .unprocessableContent && other.errorCode == "idempotency_key_reused", "\(String(buffer: other.body))")
                #expect(error["id"] as? String == firstID && ["amount", "memo"].contains(error["field"] as? String), "\(error)")
            }
            // A field set to nothing is a field named: the web app's retry after the person cleared
            // who shares an expense (it names every field of a new one) is refused, not replayed.
            var shared = headers
            shared[HTTPField.Name("Idempotency-Key")!] = "order-9"
            let sharing = try await client.execute(
                uri: "/v1/expenses", method: .post, headers: shared,
                body: ByteBuffer(string: #"{"amount": 900, "paidBy": "Ann", "split": "equal", "shares": {"Ann": 1, "Bob": 1}}"#))
            #expect(sharing.status == .created)
            let cleared = try await client.execute(
                uri: "/v1/expenses", method: .post, headers: shared,
                body: ByteBuffer(string: #"{"amount": 900, "paidBy": "Ann", "split": null, "shares": null}"#))
            #expect(cleared.status == .unprocessableContent && cleared.errorCode == "idempotency_key_reused", "\(cleared.status)")
            _ = try await client.send(.delete, "/v1/expenses/\(sharing.object["id"] as? String ?? "")", token: fixture.readWrite)
            // Values changed by an update since say nothing about a retry: it replays.
            _ = try await client.send(.patch, "/v1/expenses/\(firstID ?? "")", token: fixture.readWrite, json: #"{"amount": 650}"#)
            let afterEdit = try await client.execute(uri: "/v1/expenses", method: .post, headers: headers, body: ByteBuffer(string: #"{"amount": 500}"#))
            #expect(afterEdit.status == .ok && afterEdit.object["amount"] as? Int == 650, "\(afterEdit.status)")
            let list = try await client.send(.get, "/v1/expenses", token: fixture.readOnly)
            #expect((list.object["items"] as? [Any])?.count == 1, "no duplicate")
            // A body naming its own id is idempotent by that id: never answered with an entity
            // someone else made under it (a write-only caller would read it so).
            let theirs = try await client.send(.post, "/v1/expenses", token: fixture.readWrite, json: #"{"amount": 700, "memo": "private"}"#)
            let id = theirs.object["id"] as? String ?? ""
            headers[HTTPField.Name("Idempotency-Key")!] = "order-8"
            let named = try await client.execute(
                uri: "/v1/expenses", method: .post, headers: headers, body: ByteBuffer(string: #"{"id": "\#(id)", "amount": 1}"#))
            #expect(named.status == .conflict && named.errorCode == "already_exists" && !String(buffer: named.body).contains("private"), "\(named.status)")
            // An empty key, or one past 255 bytes, is refused (found by a hostile run: an empty
            // key replayed the first create for a second, different body).
            for key in ["", String(repeating: "k", count: 256)] {
                headers[HTTPField.Name("Idempotency-Key")!] = key
                let refused = try await client.execute(uri: "/v1/expenses", method: .post, headers: headers, body: ByteBuffer(string: #"{"amount": 900}"#))
                #expect(refused.status == .badRequest && String(buffer: refused.body).contains("Idempotency-Key"), "\(refused.status)")
            }
            // What an error quotes of the request is cut short (a 900 KB unknown key came back twice).
            let huge = try await client.send(
                .post, "/v1/expenses", token: fixture.readWrite, json: #"{"amount": 1, "\#(String(repeating: "k", count: 900_000))": 1}"#)
            #expect(huge.status == .badRequest && huge.body.readableBytes < 5_000, "\(huge.body.readableBytes) bytes")
            let after = try await client.send(.get, "/v1/expenses", token: fixture.readOnly)
            #expect((after.object["items"] as? [Any])?.count == 2, "nothing more was written")
        }
    }

    /// Requests racing with one key (a client retrying before its first answer came back):
    /// one creates, each other is refused (409, retry) or replays it — never a second create.
    @Test func requestsRacingWithOneIdempotencyKeyCreateOnce() async throws {
        let fixture = try ServerFixture()
        let ledger = fixture.service.ledger
        for round in 0..<10 {
            let outcomes = await withTaskGroup(of: String.self) { group in
                for _ in 0..<16 {
                    group.addTask {
                        do {
                            let (_, replayed) = try await ledger.create(
                                .expense, [.amount: .int(Int64(round + 1))], actor: "token:app", idempotencyKey: "race-\(round)")
                            return replayed ? "replayed" : "created"
                        } catch LedgerError.idempotencyKeyInUse {
                            return "in use"
                        } catch {
                            return "\(error)"
                        }
                    }
                }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == "created" }.count == 1, "\(outcomes)")
            #expect(outcomes.allSatisfy { ["created", "replayed", "in use"].contains($0) }, "\(outcomes)")
            // A retry after the race replays the one created.
            let (_, replayed) = try await ledger.create(.expense, [.amount: .int(Int64(round + 1))], actor: "token:app", idempotencyKey: "race-\(round)")
            #expect(replayed)
        }
        var creates = 0
        try fixture.service.ledger.directory.reader.forEachEvent { logged in
            if logged.event.operation == .create { creates += 1 }
        }
        #expect(creates == 10, "one create per key")
    }

    @Test func metricsCountRequestsByRouteAndShowProjectionLag() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            _ = try await client.send(.post, "/v1/expenses", token: fixture.readWrite, json: #"{"amount": 1}"#)
            _ = try await client.send(.get, "/v1/expenses/8b1a9953-c461-4b3e-9f5c-1d6a3b1e2f00", token: fixture.readOnly)
            let unauthorized = try await client.send(.get, "/metrics", token: nil)
            #expect(unauthorized.status == .unauthorized)
            let text = String(buffer: try await client.send(.get, "/metrics", token: fixture.readOnly).body)
            #expect(text.contains(#"tally_http_requests_total{route="/v1/expenses",method="POST",status="201"} 1"#), "\(text)")
            #expect(text.contains(#"tally_http_requests_total{route="/v1/expenses/{id}",method="GET",status="404"} 1"#), "\(text)")
            #expect(text.contains("tally_log_events 1") && text.contains("tally_projection_lag_events 0"))
            #expect(text.contains("tally_http_request_duration_seconds_bucket"))
        }
    }
}

/// Every documented route with every scope, and with `//` and percent-encoded variants of its
/// path: the scope a route needs is the one it is documented with, however its path is spelled.
@Suite struct ScopeTests {
    /// (method, path) of every operation in the served OpenAPI document, parameters filled in.
    static func operations(_ yaml: String) -> [(String, String)] {
        var operations: [(String, String)] = []
        var path: String?
        var inPaths = false
        for line in yaml.split(separator: "\n") {
            if line == "paths:" { inPaths = true; continue }
            guard inPaths else { continue }
            if line.hasPrefix("  /") {
                path = String(line.dropFirst(2).dropLast())
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), let path {
                let word = String(line.dropFirst(4).prefix { $0 != ":" })
                if ["get", "post", "put", "patch", "delete"].contains(word) {
                    operations.append(
                        (
                            word.uppercased(),
                            path.replacingOccurrences(of: "{id}", with: "8b1a9953-c461-4b3e-9f5c-1d6a3b1e2f00")
                                .replacingOccurrences(of: "{key}", with: "theme")
                        ))
                }
            }
        }
        return operations
    }

    @Test func everyRouteNeedsItsDocumentedScopeHoweverItIsSpelled() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let yaml = String(buffer: try await client.send(.get, "/openapi.yaml", token: fixture.readOnly).body)
            let operations = Self.operations(yaml)
            #expect(operations.count > 20)
            let tokens: [(String, Set<String>)] = [(fixture.readOnly, ["read"]), (fixture.readWrite, ["read", "write"]), (fixture.replicate, ["replicate"])]
            // Signing in and out, invitations and removing members have rules of their own
            // (public, or an owner only): MemberSessionTests.
            let ownRules = ["POST /v1/session", "DELETE /v1/session", "POST /v1/members/invites", "DELETE /v1/members", "POST /v1/invites/accept"]
            for (method, path) in operations where path != "/health" && path != "/openapi.yaml" && !ownRules.contains("\(method) \(path)") {
                let needed = path.hasPrefix("/v1/replication") ? "replicate" : method == "GET" ? "read" : "write"
                for (token, scopes) in tokens {
                    let allowed = scopes.contains(needed)
                    if allowed && path == "/v1/changes" { continue }  // an endless stream
                    let response = try await client.send(HTTPRequest.Method(method)!, path, token: token, json: allowed ? nil : "{}")
                    if allowed {
                        #expect(response.status != .forbidden && response.status != .unauthorized, "\(method) \(path) with \(scopes)")
                    } else {
                        #expect(response.status == .forbidden, "\(method) \(path) with \(scopes): \(response.status)")
                    }
                }
                // Spelled otherwise, it is refused before any scope is decided.
                let segments = path.split(separator: "/").map(String.init)
                var variants: [String] = []
                for index in segments.indices {
                    let before: String = segments[..<index].joined(separator: "/"), after: String = segments[index...].joined(separator: "/")
                    variants.append("/\(before)\(index > 0 ? "/" : "")/\(after)")
                }
                variants.append("/" + segments.map { $0.replacingOccurrences(of: "r", with: "%72") }.joined(separator: "/"))
                for variant in variants where variant != path {
                    let response = try await client.send(HTTPRequest.Method(method)!, variant, token: fixture.readWrite, json: "{}")
                    #expect(
                        response.status != .ok && response.status != .created && response.status != .noContent,
                        "\(method) \(variant) must not succeed: \(response.status)")
                    if variant.contains("//") || variant.contains("%") {
                        #expect(response.status == .badRequest, "\(method) \(variant): \(response.status)")
                    }
                }
            }
        }
    }
}

/// The change feed: bounded per token, ended by revocation, and it reads forward from its cursor.
@Suite struct ChangeFeedTests {
    @Test func aRevokedTokensStreamsEndAndATokenHoldsOnlySoMany() async throws {
        let folder = TemporaryDirectory("tally-feed")
        let directory = try DataDirectory.create(path: folder.file("data"), name: "feed")
        let service = try TallyService(directory: directory, logger: Logger(label: "test"), maxStreamsPerToken: 2)
        defer { service.close() }
        let secret = try service.tokens.create(name: "phone", scopes: [.read, .write])
        for amount in 1...3 { _ = try await service.ledger.create(.expense, [.amount: .int(Int64(amount))], actor: "token:phone") }
        let app = Application(router: buildRouter(service))
        try await app.test(.router) { client in
            let started = ContinuousClock.now
            async let first = client.send(.get, "/v1/changes?after=1", token: secret)
            async let second = client.send(.get, "/v1/changes?after=0", token: secret)
            // Both streams are open before the third asks (however slow the machine).
            while try service.openChangeFeeds(token: "phone") < 2 { try await Task.sleep(for: .milliseconds(20)) }
            let third = try await client.send(.get, "/v1/changes", token: secret)
            #expect(third.status == .tooManyRequests && third.errorCode == "too_many_streams")
            #expect(try service.tokens.revoke(name: "phone"))
            // Revocation must end them (a liveness bound, generous for a loaded machine, not a speed test).
            let watchdog = Task {
                try await Task.sleep(for: .seconds(120)); Issue.record("open streams outlived their token's revocation")
            }
            let (a, b) = try await (first, second)
            watchdog.cancel()
            _ = started
            let body = String(buffer: a.body)
            #expect(body.contains("id: 2\n") && body.contains("id: 3\n") && !body.contains("id: 1\n"), "forward from the cursor")
            #expect(String(buffer: b.body).contains("id: 1\n"))
        }
    }
}
