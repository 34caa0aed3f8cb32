import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Synchronization
import Testing
import TallyCore
import TallyLedger
import TallyLog
@testable import TallyServer
import TallyTestSupport

/// Members of a household who sign in with a name and a password (issue 31): the session
/// cookie, CSRF on writes, who the events say wrote them, slowed guessing, sign-out and
/// removal ending a session, and one-time invitations.
@Suite struct MemberSessionTests {
    /// A ledger with an owner `kim` and a member `lee`, served in-process (bcrypt at cost 4).
    struct Household {
        let folder = TemporaryDirectory("tally-members")
        let service: TallyService

        init() throws {
            service = try TallyService(
                directory: try DataDirectory.create(path: folder.file("home"), name: "home"), logger: Logger(label: "test"), bcryptCost: 4)
            try service.members.add("kim", role: .owner, password: "kim's long password")
            try service.members.add("lee", role: .member, password: "lee's long password")
            try service.members.add("kid", role: .readOnly, password: "kid's long password")
        }

        func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
            try await Application(router: buildRouter(service)).test(.router) { client in try await body(client) }
        }
    }

    /// A signed-in member as a client sees it: the cookie and the CSRF token.
    struct Session {
        let cookie: String
        let csrf: String

        var headers: HTTPFields { [.cookie: cookie, SessionCookie.csrfHeader: csrf, .contentType: "application/json"] }
    }

    static func signIn(_ client: any TestClientProtocol, _ name: String, _ password: String, at base: String = "/v1") async throws -> (TestResponse, Session?) {
        let response = try await client.execute(
            uri: base + "/session", method: .post, headers: [.contentType: "application/json"],
            body: ByteBuffer(string: JSONText.object([("name", .string(name)), ("password", .string(password))]).serialized))
        guard response.status == .ok || response.status == .created, let setCookie = response.headers[.setCookie],
            let csrf = response.object["csrf"] as? String
        else { return (response, nil) }
        return (response, Session(cookie: String(setCookie.prefix { $0 != ";" }), csrf: csrf))
    }

    @Test func aMemberSignsInWithACookieAndTheirWritesNameThem() async throws {
        let home = try Household()
        try await home.test { client in
            let (answer, session) = try await Self.signIn(client, "lee", "lee's long password")
            let cookie = try #require(answer.headers[.setCookie])
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/v1"), "\(cookie)")
            #expect(!cookie.contains("Secure"), "served without TLS")
            let lee = try #require(session)
            let listed = try await client.execute(uri: "/v1/expenses", method: .get, headers: [.cookie: lee.cookie])
            #expect(listed.status == .ok)
            let who = try await client.execute(uri: "/v1/session", method: .get, headers: [.cookie: lee.cookie])
            #expect(who.object["member"] as? String == "lee" && who.object["role"] as? String == "member")

            let body = ByteBuffer(string: #"{"amount": 4200}"#)
            let forged = try await client.execute(
                uri: "/v1/expenses", method: .post, headers: [.cookie: lee.cookie, .contentType: "application/json"], body: body)
            #expect(forged.status == .forbidden && forged.errorCode == "csrf", "a write without the CSRF token is refused")
            let created = try await client.execute(uri: "/v1/expenses", method: .post, headers: lee.headers, body: body)
            #expect(created.status == .created)
            let id = try #require(created.object["id"] as? String)
            let history = try await client.execute(uri: "/v1/audit/\(id)", method: .get, headers: [.cookie: lee.cookie])
            #expect(String(buffer: history.body).contains(#""actor":"member:lee""#), "\(String(buffer: history.body))")
        }
        let secure = try await Self.secureCookie(home)
        #expect(secure.contains("; Secure"))
    }

    static func secureCookie(_ home: Household) async throws -> String {
        try await Application(router: buildRouter(home.service)).test(.router) { client in
            let response = try await client.execute(
                uri: "/v1/session", method: .post, headers: [.contentType: "application/json", HTTPField.Name("X-Forwarded-Proto")!: "https"],
                body: ByteBuffer(string: #"{"name": "kim", "password": "kim's long password"}"#))
            return response.headers[.setCookie] ?? ""
        }
    }

    @Test func aReadOnlyMemberReadsButCannotWrite() async throws {
        let home = try Household()
        try await home.test { client in
            let kid = try #require(try await Self.signIn(client, "kid", "kid's long password").1)
            #expect(try await client.execute(uri: "/v1/expenses", method: .get, headers: [.cookie: kid.cookie]).status == .ok)
            let refused = try await client.execute(uri: "/v1/expenses", method: .post, headers: kid.headers, body: ByteBuffer(string: #"{"amount": 1}"#))
            #expect(refused.status == .forbidden)
        }
    }

    /// Wrong passwords are 401 with one message whether or not the name exists; after five
    /// failures the account waits (429 with Retry-After) even for the right password.
    @Test func guessingIsSlowedPerAccount() async throws {
        let home = try Household()
        try await home.test { client in
            let unknown = try await Self.signIn(client, "nobody", "whatever it is").0
            #expect(unknown.status == .unauthorized && unknown.errorCode == "wrong_credentials")
            for _ in 0..<4 {  // five failures from this address in all, with the unknown name's
                let wrong = try await Self.signIn(client, "kim", "not kim's password").0
                #expect(wrong.status == .unauthorized && wrong.errorCode == "wrong_credentials")
            }
            let slowed = try await Self.signIn(client, "kim", "kim's long password").0
            #expect(slowed.status == .tooManyRequests && slowed.headers[.retryAfter] != nil, "\(slowed.status)")
        }
    }

    /// A session's cookie is refused once its member signed out, or was removed.
    @Test func aCookieReplayedAfterSignOutOrRemovalIsRefused() async throws {
        let home = try Household()
        try await home.test { client in
            let first = try #require(try await Self.signIn(client, "lee", "lee's long password").1)
            let out = try await client.execute(uri: "/v1/session", method: .delete, headers: first.headers)
            #expect(out.status == .noContent && out.headers[.setCookie]?.contains("Max-Age=0") == true)
            let replayed = try await client.execute(uri: "/v1/expenses", method: .get, headers: [.cookie: first.cookie])
            #expect(replayed.status == .unauthorized && replayed.errorCode == "signed_out")

            let second = try #require(try await Self.signIn(client, "lee", "lee's long password").1)
            let kim = try #require(try await Self.signIn(client, "kim", "kim's long password").1)
            let removed = try await client.execute(uri: "/v1/members?name=lee", method: .delete, headers: kim.headers)
            #expect(removed.status == .noContent)
            let after = try await client.execute(uri: "/v1/expenses", method: .get, headers: [.cookie: second.cookie])
            #expect(after.status == .unauthorized)
            let onlyOwner = try await client.execute(uri: "/v1/members?name=kim", method: .delete, headers: kim.headers)
            #expect(onlyOwner.status == .conflict, "the last owner stays")
        }
    }

    /// An owner's invitation makes one member, once, within its time; members cannot invite.
    @Test func invitationsAreForOwnersSingleUseAndExpire() async throws {
        let home = try Household()
        try await home.test { client in
            let lee = try #require(try await Self.signIn(client, "lee", "lee's long password").1)
            let notOwner = try await client.execute(uri: "/v1/members/invites", method: .post, headers: lee.headers, body: ByteBuffer(string: "{}"))
            #expect(notOwner.status == .forbidden)
            let kim = try #require(try await Self.signIn(client, "kim", "kim's long password").1)
            let invited = try await client.execute(
                uri: "/v1/members/invites", method: .post, headers: kim.headers, body: ByteBuffer(string: #"{"role": "member"}"#))
            #expect(invited.status == .created)
            let code = try #require(invited.object["code"] as? String)
            let accept = { (name: String) in
                try await client.execute(
                    uri: "/v1/invites/accept", method: .post, headers: [.contentType: "application/json"],
                    body: ByteBuffer(
                        string: JSONText.object([("code", .string(code)), ("name", .string(name)), ("password", .string("a fine long password"))]).serialized))
            }
            // 64 Hangul syllables are 64 characters but 192 bytes: "member:" and such a name
            // would pass no write's actor rule, so it is refused, and the code stays unspent.
            let tooLong = try await accept(String(repeating: "가", count: 64))
            #expect(tooLong.status == .badRequest && String(buffer: tooLong.body).contains("121 bytes"), "\(String(buffer: tooLong.body))")
            let joined = try await accept("park")
            #expect(joined.status == .created && joined.headers[.setCookie]?.hasPrefix("tally_session=") == true)
            let again = try await accept("choi")
            #expect(again.status == .notFound, "single use")
            let members = try await client.execute(uri: "/v1/members", method: .get, headers: [.cookie: kim.cookie])
            #expect(String(buffer: members.body).contains(#""name":"park""#) && !String(buffer: members.body).contains("choi"))
        }
        let stale = try home.service.members.invite(role: .member, by: "kim", now: Date().addingTimeInterval(-8 * 86_400))
        #expect(throws: ValidationError.self) { _ = try home.service.members.accept(stale.code, name: "late", password: "a fine long password") }
    }

    /// Hosted: a session of one household gets nothing of another.
    @Test func aSessionOfOneHostedLedgerGetsNothingOfAnother() async throws {
        var limits = HostingLimits()
        limits.bcryptCost = 4
        let fixture = try HostedFixture(["a", "b"], limits: limits)
        try MemberStore(folder: fixture.ledgers.root + "/a", cost: 4).add("kim", role: .owner, password: "kim's long password")
        try await fixture.test { client in
            let (answer, session) = try await Self.signIn(client, "kim", "kim's long password", at: "/v1/ledgers/a")
            let kim = try #require(session)
            #expect(answer.headers[.setCookie]?.contains("Path=/v1/ledgers/a") == true)
            #expect(try await client.execute(uri: "/v1/ledgers/a/expenses", method: .get, headers: [.cookie: kim.cookie]).status == .ok)
            let other = try await client.execute(uri: "/v1/ledgers/b/expenses", method: .get, headers: [.cookie: kim.cookie])
            #expect(other.status == .unauthorized)
            let signInThere = try await Self.signIn(client, "kim", "kim's long password", at: "/v1/ledgers/b").0
            #expect(signInThere.status == .unauthorized)
        }
    }

    /// Found by the review: guesses sent at once each count before any password is checked.
    @Test func guessesSentTogetherEachCount() {
        let throttle = SignInThrottle()
        let keys = ["account:/v1/kim", "address:10.0.0.1"]
        let allowed = (0..<10).filter { _ in throttle.attempt(keys) == nil }.count
        #expect(allowed == 5, "five tries, then the account waits")
        throttle.succeeded(keys)
        #expect(throttle.attempt(["account:/v1/kim"]) == nil, "a success clears the account")
    }

    /// Sign-ins take turns at their password's check: never more than `atOnce` at a time,
    /// every waiting one runs in its turn, and one past `maxWaiting` is refused at once (503)
    /// — a member signing in in a loop kept both cores hashing (found by review).
    @Test func signInsTakeTurnsAtTheirPasswordsCheck() async throws {
        final class Seen: Sendable {
            let checks = Mutex((running: 0, most: 0, done: 0, refused: 0))
        }
        let (turns, seen) = (PasswordCheckTurns(atOnce: 1, maxWaiting: 8), Seen())
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    do {
                        try await turns.run {
                            seen.checks.withLock {
                                $0.running += 1; $0.most = max($0.most, $0.running)
                            }
                            try await Task.sleep(for: .milliseconds(200))  // long beside the tasks' start
                            seen.checks.withLock {
                                $0.running -= 1; $0.done += 1
                            }
                        }
                    } catch let busy as APIError {
                        #expect(busy.status == .serviceUnavailable && busy.retryAfter != nil)
                        seen.checks.withLock { $0.refused += 1 }
                    } catch { Issue.record("\(error)") }
                }
            }
        }
        let checks = seen.checks.withLock { $0 }
        #expect(checks.most == 1, "one check at a time")
        #expect(checks.refused >= 20 - 1 - 8, "past the one running and the eight waiting, refused: \(checks.refused)")
        #expect(checks.done + checks.refused == 20, "every other one ran in its turn")
        #expect(try await turns.run { 7 } == 7, "the turns are free again")

        // A sign-in asks the throttle before it waits for a turn, and counts its try once it has
        // one: asking counts nothing.
        let throttle = SignInThrottle()
        let keys = ["account:/v1/kim", "address:10.0.0.1"]
        for _ in 0..<SignInThrottle.freeFailures - 1 {
            #expect(throttle.waiting(keys) == nil)
            #expect(throttle.attempt(keys) == nil)
        }
        #expect(throttle.waiting(keys) == nil && throttle.waiting(keys) == nil, "four tries counted, none locked: asking counted nothing")
        #expect(throttle.attempt(keys) == nil, "the fifth try is allowed, and locks")
        #expect(throttle.waiting(keys) != nil)
    }

    /// Found by review: the decoy hash was made anew at every sign-in of an unknown name (a
    /// hash and a check: twice a wrong password's work), so timing told which names exist.
    @Test func theDecoyHashIsMadeOnceSoAnUnknownNameCostsAsMuchAsAWrongPassword() {
        let first = MemberStore.decoyHash(cost: 4)
        #expect(MemberStore.decoyHash(cost: 4) == first, "kept, not made again")
        #expect(MemberStore.decoyHash(cost: 5) != first)
    }

    /// Found by CI: on a busy server the password's check (bcrypt) can take longer than the
    /// first lockout; the lockout runs from when each failure is known, not from its start.
    @Test func theLockoutRunsFromWhenTheFailureIsKnown() {
        let throttle = SignInThrottle()
        let keys = ["account:/v1/kim"]
        let start = ContinuousClock.now
        for _ in 0..<5 { #expect(throttle.attempt(keys, now: start) == nil) }
        let known = start + .seconds(3)  // each check took three seconds
        throttle.failed(keys, now: known)
        #expect(throttle.attempt(keys, now: known + .milliseconds(500)) != nil, "still within the second after the failure")
        #expect(throttle.attempt(keys, now: known + .milliseconds(1_100)) == nil)
    }

    /// Found by the review: the last owner cannot be removed, even by two owners at once;
    /// a removed member's invitations are withdrawn; a NUL does not cut a password short.
    @Test func theLastOwnerStaysInvitationsFollowTheirMakerAndPasswordsHaveNoControls() throws {
        let home = try Household()
        let members = home.service.members
        try members.add("park", role: .owner, password: "park's long password")
        #expect(try members.remove("park"))
        #expect { try members.remove("kim") } throws: { "\($0)".contains("only owner") }
        try members.add("mo", role: .owner, password: "mo's long password")
        let invitation = try members.invite(role: .owner, by: "mo")
        #expect(try members.remove("mo"))
        #expect(throws: ValidationError.self) { _ = try members.accept(invitation.code, name: "mo", password: "mo's long password") }
        #expect(throws: ValidationError.self) { try members.add("nul", role: .member, password: "\u{0}abcdefghijk") }
        #expect(try members.signIn("kim", password: "kim's long password\u{0}anything") == nil)
    }

    /// Found by review: the invite route checks its caller is an owner, then reads the body
    /// (up to 30 s); an owner removed meanwhile — `remove` withdraws their invitations once —
    /// left a fresh invitation behind, and came back through it. Only a member who is an
    /// owner when the invitation is stored makes one.
    @Test func anInvitationIsStoredOnlyForWhoIsAnOwnerThen() throws {
        let home = try Household()
        let members = home.service.members
        try members.add("mallory", role: .owner, password: "mallory's long password")
        #expect(try members.remove("mallory"))
        #expect(throws: APIError.self) { _ = try members.invite(role: .owner, by: "mallory") }
        #expect(throws: APIError.self) { _ = try members.invite(role: .owner, by: "lee") }
        #expect(try members.invitations.read().isEmpty)
        _ = try members.invite(role: .member, by: "kim")
        #expect(try members.invitations.read().count == 1)
    }

    /// Found by review: a sign-in reads the member, checks the password (bcrypt, slow), then
    /// stores the session. A removal in between ended the sessions before the new one landed,
    /// and a member added again under that name (the only way to change a password) found
    /// the stranded session theirs. It is stored only for the member as checked.
    @Test func aSessionStartedDuringARemovalIsNotStored() throws {
        let home = try Household()
        let members = home.service.members
        let checked = try #require(try members.all().first { $0.name == "lee" })  // as the sign-in read them
        #expect(try members.remove("lee"))
        try members.add("lee", role: .member, password: "lee's new long password")
        #expect(try members.startSession(for: checked, now: Date()) == nil, "the member checked is gone")
        #expect(try members.sessions.read().isEmpty)
        let now = try #require(try members.all().first { $0.name == "lee" })
        let session = try #require(try members.startSession(for: now, now: Date()))
        #expect(try members.session(session.secret)?.member.name == "lee")
    }

    /// Found by review: sessions were capped per ledger, the oldest ending first, so any
    /// member (a read-only one too) signing in a thousand times signed everyone else out.
    /// A member's own oldest end instead.
    @Test func oneMembersSignInsEndOnlyTheirOwnOldestSessions() throws {
        let home = try Household()
        let members = home.service.members
        let lee = try #require(try members.signIn("lee", password: "lee's long password"))
        let kims = try (0...MemberStore.maxSessionsPerMember).map { _ in try #require(try members.signIn("kid", password: "kid's long password")) }
        #expect(try members.session(lee.secret) != nil, "another member's session stays")
        #expect(try members.session(kims[0].secret) == nil, "their own oldest ended")
        #expect(try kims.dropFirst().allSatisfy { try members.session($0.secret) != nil })
    }

    /// Found by review: past `maxKeys` the throttle dropped the entries locked least lately —
    /// an account whose lockout had passed went first — so a flood of new addresses (one
    /// cheap failure each) wiped an account's count and gave its guesser five more tries.
    @Test func aFloodOfAddressesDoesNotForgiveAnAccount() {
        let throttle = SignInThrottle()
        let account = ["account:/v1/alice"]
        let start = ContinuousClock.now
        for _ in 0..<SignInThrottle.freeFailures { #expect(throttle.attempt(account, now: start) == nil) }
        let later = start + .seconds(2)
        for address in 0...SignInThrottle.maxKeys { _ = throttle.attempt(["address:flood-\(address)"], now: later) }
        let after = later + .seconds(1)
        #expect(throttle.attempt(account, now: after) == nil, "the lockout has passed: one more try")
        #expect(throttle.attempt(account, now: after) != nil, "and then the account waits, its count kept")
    }

    /// Found by review: addresses were counted whole, and an IPv6 client holds a /64 of them.
    @Test func anIPv6AddressCountsByItsFirst64Bits() throws {
        let key = { (text: String) in SignInThrottle.addressKey(try SocketAddress(ipAddress: text, port: 1)) }
        #expect(try key("2001:db8:1:2::1") == key("2001:db8:1:2:ffff:1:2:3"))
        #expect(try key("2001:db8:1:2::1") != key("2001:db8:1:3::1"))
        #expect(try key("::ffff:10.0.0.7") == key("10.0.0.7"))
        #expect(try key("10.0.0.7") != key("10.0.0.8"))
    }
}
