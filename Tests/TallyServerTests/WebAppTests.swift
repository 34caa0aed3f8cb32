import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TallyCore
import TallyLog
@testable import TallyServer
import TallySync
import TallyTestSupport
import TallyWebApp

/// The web app's files as the service serves them, and the API routes made for it: the
/// session, the sync status, the summary's drill-down, the list's text filter, the merged
/// categories, and the field an error names. (The app itself is tested in a real browser:
/// Tests/Browser, scripts/test-browser.)
@Suite struct WebAppTests {
    @Test func thePageAndItsAssetsAreServedWithoutATokenUnderAStrictPolicy() async throws {
        let fixture = try ServerFixture()
        let version = WebAppRoutes.catalog.version
        try await fixture.test { client in
            let page = try await client.send(.get, "/", token: nil)
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(page.headers[.cacheControl] == "no-cache")
            let policy = page.headers[HTTPField.Name("Content-Security-Policy")!] ?? ""
            #expect(policy.contains("default-src 'none'") && policy.contains("script-src 'self';") && !policy.contains("unsafe"))
            #expect(page.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
            let html = String(buffer: page.body)
            #expect(!html.contains("{{assets}}") && html.contains("/assets/\(version)/app.js"))
            #expect(
                html.range(of: "<script>") == nil && html.range(of: " style=") == nil && html.range(of: " on[a-z]+=", options: .regularExpression) == nil,
                "no inline script, style or handler")

            let script = try await client.send(.get, "/assets/\(version)/app.js", token: nil)
            #expect(script.status == .ok && script.headers[.contentType] == "text/javascript; charset=utf-8")
            #expect(script.headers[.cacheControl] == "public, max-age=31536000, immutable")
            let head = try await client.send(.head, "/assets/\(version)/app.css", token: nil)
            #expect(head.status == .ok && head.body.readableBytes == 0 && head.headers[.contentLength].flatMap(Int.init) ?? 0 > 0)

            // Anything else under /assets is a 404 (or, not shaped like an asset's path, needs a
            // token like any other path): never a file from elsewhere, never the page.
            for path in [
                "/assets/0000000000000000/app.js", "/assets/\(version)/nope.js", "/assets/\(version)/index.html",
                "/assets/\(version)/../../tokens.json", "/assets/\(version)/WebAssets.swift", "/assets/\(version)", "/assets/",
                "/assets/\(version)/../../v1/session", "/assets/\(version)/app.js/../../../v1/expenses",
            ] {
                let response = try await client.send(.get, path, token: nil)
                #expect(response.status == .notFound || response.status == .unauthorized, "\(path): \(response.status)")
                #expect(!String(buffer: response.body).contains("sha256") && !String(buffer: response.body).contains("items"), "\(path)")
            }
            #expect(WebAppRoutes.isPublic("/assets/\(version)/app.js") && !WebAppRoutes.isPublic("/assets/\(version)/../x.js"))
            for path in ["/assets/0123456789abcdef/app.js", "/assets/0123456789abcdef/A_b-9.css", "/"] { #expect(WebAppRoutes.isPublic(path), "\(path)") }
            for path in [
                "/assets/0123456789ABCDEF/app.js", "/assets/0123456789abcde/app.js", "/assets/0123456789abcdef0/app.js",
                "/assets/0123456789abcdef/app", "/assets/0123456789abcdef/.js", "/assets/0123456789abcdef/app.", "/assets/0123456789abcdef/a.b.js",
                "/assets/0123456789abcdef/app.JS", "/assets/0123456789abcdef/ap p.js", "/assets/0123456789abcdef/app.js/", "/assets/0123456789abcdefxapp.js",
                "/assetsx0123456789abcdef/app.js", "//", "", "/assets/0123456789abcdef/é.js", "/v1/expenses",
            ] {
                #expect(!WebAppRoutes.isPublic(path), "\(path)")
            }
            #expect(try await client.send(.get, "/assets/\(version)/currencies.js", token: nil).status == .ok)
            for path in ["/assets/\(version)/%2e%2e%2ftokens.json", "/assets//\(version)/app.js"] {
                #expect(try await client.send(.get, path, token: nil).status == .badRequest, "\(path)")
            }
            // The API stays behind its token.
            #expect(try await client.send(.get, "/v1/session", token: nil).status == .unauthorized)
            #expect(try await client.send(.post, "/", token: nil, json: "{}").status != .ok)
        }
    }

    /// Every file the page or a module names is one the service serves: a file added to
    /// WebApp/ but not to Package.swift and WebAssets.swift would be a 404 in the browser.
    @Test func everyAssetThePageOrAModuleNamesIsServed() throws {
        let catalog = WebAppRoutes.catalog
        var named: Set<String> = []
        let page = String(decoding: catalog.page, as: UTF8.self)
        for match in page.matches(of: /\/assets\/[0-9a-f]{16}\/([A-Za-z0-9_.-]+)/) { named.insert(String(match.1)) }
        for (name, asset) in catalog.assets where name.hasSuffix(".js") {
            let text = String(decoding: asset.bytes, as: UTF8.self)
            for match in text.matches(of: /(?:from|import\()\s*"\.\/([A-Za-z0-9_.-]+)"/) { named.insert(String(match.1)) }
        }
        #expect(named.count >= 12)
        for name in named { #expect(catalog.assets[name] != nil, "\(name) is named but not served") }
        for name in catalog.assets.keys where name != "index.html" { #expect(named.contains(name), "\(name) is served but nothing uses it") }
        // The currency table the app formats money with is the service's own.
        let currencies = String(decoding: catalog.assets["currencies.js"]?.bytes ?? [], as: UTF8.self)
        for (code, digits) in [("KRW", 0), ("USD", 2), ("IQD", 3), ("IDR", 2), ("CLF", 4)] {
            #expect(currencies.contains("\(code):\(digits),") || currencies.contains("\(code):\(digits)}"))
        }
    }

    @Test func theSessionSaysWhatTheTokenMayDoAndWhereTheLogStands() async throws {
        let fixture = try ServerFixture()
        _ = try await fixture.service.ledger.create(.expense, [.amount: .int(100)], actor: "test")
        try await fixture.test { client in
            let reader = try await client.send(.get, "/v1/session", token: fixture.readOnly)
            #expect(reader.object["token"] as? String == "viewer" && reader.object["scopes"] as? [String] == ["read"])
            #expect(reader.object["appendedIndex"] as? Int == 1 && reader.object["projectedIndex"] as? Int == 1)
            #expect(reader.object["replicaId"] as? String == fixture.service.directory.identity.replicaId)
            let writer = try await client.send(.get, "/v1/session", token: fixture.readWrite)
            #expect(writer.object["scopes"] as? [String] == ["read", "write"])
            #expect(try await client.send(.get, "/v1/session", token: fixture.replicate).status == .forbidden)
        }
    }

    @Test func theSyncStatusShowsEachPeersLastSyncAndWhatItLacksButNeverItsToken() async throws {
        let home = try ServerFixture(), peer = try ServerFixture()
        _ = try await home.service.ledger.create(.expense, [.amount: .int(100)], actor: "test")
        let app = Application(router: buildRouter(peer.service), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { peerClient in
            let peers = PeerStore(directory: home.service.directory)
            try peers.add(Peer(name: "laptop", url: "http://127.0.0.1:\(peerClient.port!)", token: peer.replicate))
            try peers.add(Peer(name: "gone", url: "http://someone:hunter2@127.0.0.1:9/?key=sesame#x", token: "tly_peer-secret"))
            try peers.add(Peer(name: "http://alice:swordfish@127.0.0.1:1/?t=open", url: "http://alice:swordfish@127.0.0.1:1", token: "t"))
            try await home.test { client in
                func status() async throws -> (body: String, peers: [String: [String: Any]]) {
                    let response = try await client.send(.get, "/v1/sync/status", token: home.readOnly)
                    #expect(response.status == .ok)
                    let list = response.object["peers"] as? [[String: Any]] ?? []
                    return (String(buffer: response.body), Dictionary(uniqueKeysWithValues: list.map { ($0["name"] as? String ?? "", $0) }))
                }
                var (body, byName) = try await status()
                #expect(byName["laptop"]?["lastSuccessAt"] is NSNull && byName["laptop"]?["unsent"] as? Int == 1, "never synced: it lacks everything")
                for secret in ["hunter2", "someone", "peer-secret", peer.replicate, "sesame", "alice", "swordfish", "open"] {
                    #expect(!body.contains(secret), "\(secret) shown")
                }
                #expect(byName["http://127.0.0.1:1/"] != nil, "a peer named by a URL is named by it without credentials")
                #expect(byName["gone"]?["url"] as? String == "http://127.0.0.1:9/")

                #expect(try await client.send(.post, "/v1/replication/sync", token: home.replicate, json: #"{"peer": "laptop"}"#).status == .ok)
                #expect(try await client.send(.post, "/v1/replication/sync", token: home.replicate, json: #"{"peer": "gone"}"#).status == .badGateway)
                (body, byName) = try await status()
                #expect(byName["laptop"]?["lastSuccessAt"] is String && byName["laptop"]?["lastError"] is NSNull)
                #expect(byName["laptop"]?["pushed"] as? Int == 1 && byName["laptop"]?["unsent"] as? Int == 0)
                #expect(byName["gone"]?["lastSuccessAt"] is NSNull && (byName["gone"]?["lastError"] as? String)?.contains("could not be reached") == true)

                _ = try await home.service.ledger.create(.expense, [.amount: .int(200)], actor: "test")
                (_, byName) = try await status()
                #expect(byName["laptop"]?["unsent"] as? Int == 1, "written since the last sync")
            }
        }
    }

    @Test func theSummaryDrillsDownIntoACategorysChildren() async throws {
        let fixture = try ServerFixture()
        let ledger = fixture.service.ledger
        func category(_ name: String, under parent: UUID? = nil) async throws -> UUID {
            let id = UUID()
            var properties: PropertyMap = [.name: .string(name)]
            if let parent { properties[.parentId] = .uuid(parent) }
            _ = try await ledger.create(.category, id: id, properties, actor: "t")
            return id
        }
        let food = try await category("Food"), bus = try await category("Bus")
        let lunch = try await category("Lunch", under: food)
        let noodles = try await category("Noodles", under: lunch)
        for (amount, category) in [(1_000, food), (2_000, lunch), (4_000, noodles), (8_000, bus)] {
            _ = try await ledger.create(
                .expense, [.amount: .int(Int64(amount)), .categoryId: .uuid(category), .date: .dateTime(DateTime(iso8601: "2026-05-02")!)], actor: "t")
        }
        try await fixture.test { client in
            func byCategory(_ query: String) async throws -> [String: Int] {
                let response = try await client.send(.get, "/v1/summary?month=2026-05\(query)", token: fixture.readOnly)
                #expect(response.status == .ok, "\(query)")
                let groups = response.object["byCategory"] as? [[String: Any]] ?? []
                return Dictionary(uniqueKeysWithValues: groups.map { ($0["label"] as? String ?? "", $0["amount"] as? Int ?? -1) })
            }
            #expect(try await byCategory("") == ["Food": 7_000, "Bus": 8_000])
            #expect(try await byCategory("&category=\(food.lowercased)") == ["Food": 1_000, "Lunch": 6_000], "its own, and each child with its subtree")
            #expect(try await byCategory("&category=\(lunch.lowercased)") == ["Lunch": 2_000, "Noodles": 4_000])
            #expect(try await byCategory("&category=\(noodles.lowercased)") == ["Noodles": 4_000])
            let missing = try await client.send(.get, "/v1/summary?month=2026-05&category=8b1a9953-c461-4b3e-9f5c-1d6a3b1e2f00", token: fixture.readOnly)
            #expect(missing.status == .notFound && (missing.object["error"] as? [String: Any])?["field"] as? String == "category")
            let malformed = try await client.send(.get, "/v1/summary?month=2026-05&category=food", token: fixture.readOnly)
            #expect(malformed.status == .badRequest)
        }
    }

    @Test func theTextFilterMatchesLiterallyInPayeeMemoAndPayment() async throws {
        let fixture = try ServerFixture()
        for (payee, memo, payment) in [("100% Coffee", nil, "card"), ("Bakery", "half_price", "cash"), ("Mart", "weekly shop", "card_2")]
            as [(String, String?, String)]
        {
            var properties: PropertyMap = [.amount: .int(100), .payee: .string(payee), .payment: .string(payment)]
            if let memo { properties[.memo] = .string(memo) }
            _ = try await fixture.service.ledger.create(.expense, properties, actor: "t")
        }
        try await fixture.test { client in
            func payees(_ text: String) async throws -> [String] {
                let response = try await client.send(.get, "/v1/expenses?text=\(text)", token: fixture.readOnly)
                return (response.object["items"] as? [[String: Any]] ?? []).compactMap { $0["payee"] as? String }.sorted()
            }
            #expect(try await payees("coffee") == ["100% Coffee"], "ASCII case-insensitive")
            #expect(try await payees("%25") == ["100% Coffee"], "a % is a percent sign, not a wildcard")
            #expect(try await payees("_") == ["Bakery", "Mart"], "an _ is an underscore")
            #expect(try await payees("shop") == ["Mart"])
            #expect(try await payees("%5C") == [])
            let empty = try await client.send(.get, "/v1/expenses?text=", token: fixture.readOnly)
            #expect(empty.status == .badRequest && (empty.object["error"] as? [String: Any])?["field"] as? String == "text")
        }
    }

    @Test func mergedDuplicateCategoriesAreListedWithTheirWinnerAndWhy() async throws {
        let home = try ServerFixture(), away = try ServerFixture()
        let mine = UUID(), theirs = UUID()
        _ = try await home.service.ledger.create(.category, id: mine, [.name: .string("Food")], actor: "t")
        _ = try await away.service.ledger.create(.category, id: theirs, [.name: .string("food ")], actor: "t")
        let bundle = home.folder.file("bundle")
        _ = try SegmentBundle.export(away.service.directory, to: bundle, for: nil)
        _ = try await home.service.ledger.importBundle(from: bundle)
        try await home.test { client in
            let response = try await client.send(.get, "/v1/categories", token: home.readOnly)
            let items = response.object["items"] as? [[String: Any]] ?? []
            let merged = response.object["merged"] as? [[String: Any]] ?? []
            #expect(items.count == 1 && merged.count == 1)
            let winner = items.first?["id"] as? String
            #expect(Set([mine.lowercased, theirs.lowercased]) == Set([winner, merged.first?["id"] as? String].compactMap { $0 }))
            #expect(merged.first?["mergedInto"] as? String == winner)
            #expect((merged.first?["reason"] as? String)?.contains("same name 'food'") == true)
        }
    }

    @Test func aValidationErrorNamesItsField() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let response = try await client.send(.post, "/v1/expenses", token: fixture.readWrite, json: #"{"amount": "12,5x"}"#)
            let error = response.object["error"] as? [String: Any]
            #expect(response.status == .badRequest && error?["field"] as? String == "amount")
            let unauthorized = try await client.send(.get, "/v1/expenses", token: nil)
            #expect((unauthorized.object["error"] as? [String: Any])?["field"] == nil, "no field when none is at fault")
        }
    }
}
