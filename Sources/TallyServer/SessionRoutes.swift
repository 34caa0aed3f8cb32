import Foundation
import HTTPTypes
import Hummingbird
import TallyCore
import TallyLedger

/// The session cookie: `tally_session`, HttpOnly (no script reads it), SameSite=Strict (no
/// other site's request carries it), scoped to the ledger's API path, and Secure when the
/// request came over TLS (as a proxy in front says with `X-Forwarded-Proto: https`).
enum SessionCookie {
    static let name = "tally_session"
    static let csrfHeader = HTTPField.Name("X-CSRF-Token")!

    /// The cookie's value in `request`, if it carries one.
    static func value(in request: Request) -> String? {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name { return String(parts[1]).trimmingCharacters(in: .whitespaces) }
            }
        }
        return nil
    }

    /// `Set-Cookie` for `secret` (nil: one that ends the cookie).
    static func header(_ secret: String?, path: String, request: Request) -> String {
        let secure = request.headers[HTTPField.Name("X-Forwarded-Proto")!]?.lowercased() == "https" ? "; Secure" : ""
        let lifetime = secret == nil ? 0 : Int(MemberStore.sessionLifetime)
        return "\(name)=\(secret ?? ""); Path=\(path); Max-Age=\(lifetime); HttpOnly; SameSite=Strict\(secure)"
    }
}

/// Members and their sessions: signing in and out with a name and password, the household's
/// members, invitations an owner makes, and joining with one. Signing in and accepting an
/// invitation are public (they need no caller) and read the ledger's members without opening
/// it; the rest need a caller, and inviting or removing a member needs an owner.
struct SessionRoutes {
    /// Whether `request` is one of the public routes: `POST …/session` and `POST …/invites/accept`.
    /// Read by segments, as the router reads a path (it passes over empty ones): `…/session/`
    /// reaches the same route, and must be taken for it here too — a forwarding node that did
    /// not sent it on without its client's address (found by review).
    static func isPublic(_ request: Request) -> Bool {
        guard request.method == .post else { return false }
        // Every POST passes here (a create too): only a path ending as a public route's does is
        // split, the others answered without allocating.
        let path = request.uri.path
        let end = path.lastIndex { $0 != "/" }.map { path[...$0] } ?? ""
        guard end.hasSuffix("session") || end.hasSuffix("accept") else { return false }
        let segments = path.split(separator: "/")
        guard segments.first == "v1" else { return false }
        // A hosted ledger's: /v1/ledgers/NAME/…
        let route = segments.count > 2 && segments[1] == "ledgers" ? segments.dropFirst(3) : segments.dropFirst()
        return route.elementsEqual(["session"]) || route.elementsEqual(["invites", "accept"])
    }

    /// The address a sign-in is counted under: its client's, as the node that forwarded it
    /// proved it (`ForwardedClient`), else the connection's.
    static func clientAddress(_ context: TallyRequestContext) -> String {
        context.forwardedClientAddress ?? SignInThrottle.addressKey(context.channel.remoteAddress)
    }

    func add(to group: APIRoutes, public open: APIRoutes) {
        let signIn = APIOperation(
            "Sign in as a member with a name and password: sets the session cookie (HttpOnly, SameSite=Strict) and answers the CSRF token every write with the cookie must send as X-CSRF-Token. After five failures an account (and an address) waits, doubling: 429 with Retry-After.",
            isPublic: true,
            body: APIBody.jsonSchema(
                "{type: object, additionalProperties: false, required: [name, password], properties: {name: {type: string, maxLength: 64}, password: {type: string, maxLength: 200}}}"
            ), responses: [(200, APIResponse.text("Signed in: {member, role, csrf, expiresAt}"))], errors: [400, 401, 429])
        open.post("session", signIn) { request, context in
            let body = try await Self.fields(request, ["name", "password"])
            let (name, password) = (body["name"] ?? "", body["password"] ?? "")
            // The account is the ledger's member, however the path was spelled (a trailing
            // slash reaches the same route and must meet the same count).
            // A member's name is at most 64 characters: a longer one names nobody, and is cut
            // so that a stranger's long names cannot fill the throttle's memory.
            let account = "account:\(context.credentials?.apiPath ?? "none")/\(name.prefix(65))"
            let keys = [account, Self.clientAddress(context)]
            let throttle = try Self.throttle(context)
            func slowDown(_ wait: Duration) -> APIError {
                var error = APIError(.tooManyRequests, "slow_down", "too many failed sign-ins; try again in \(wait.components.seconds + 1) s")
                error.retryAfter = Int(wait.components.seconds + 1)
                return error
            }
            // A locked account or address is refused at once, not queued for a turn.
            if let wait = throttle.waiting(keys) { throw slowDown(wait) }
            // A ledger that does not exist answers as a wrong password does, after as long (the
            // same bcrypt work): a stranger cannot tell which households there are.
            let (credentials, cost) = (context.credentials, context.passwordCost)
            let session = try await PasswordCheckTurns.shared.run {
                // Counted as a failure once the try has its turn, before the password is
                // checked: guesses sent at once each count, and a success takes its count back.
                // (Counted before the turn, a try refused for want of one had to be taken back,
                // and taking it back could not restore the lock it had before.)
                if let wait = throttle.attempt(keys) { throw slowDown(wait) }
                return try await BlockingThreads.run { () -> MemberStore.NewSession? in
                    guard let credentials else {
                        MemberStore.checkDecoy(password, cost: cost)
                        return nil
                    }
                    return try credentials.members.signIn(name, password: password)
                }
            }
            guard let credentials, let session else {
                throttle.failed(keys)
                throw APIError(.unauthorized, "wrong_credentials", "wrong name or password")
            }
            throttle.succeeded(keys)
            try await credentials.afterChange?()
            return Self.signedIn(session, credentials, request, status: .ok)
        }
        let accept = APIOperation(
            "Join the household with an invitation's code, as a new member who is then signed in (the cookie, as POST /v1/session). A code works once, within its time.",
            isPublic: true,
            body: APIBody.jsonSchema(
                "{type: object, additionalProperties: false, required: [code, name, password], properties: {code: {type: string, maxLength: 64}, name: {type: string, maxLength: 64}, password: {type: string, minLength: 10, maxLength: 200}}}"
            ), responses: [(201, APIResponse.text("Joined and signed in: {member, role, csrf, expiresAt}"))], errors: [400, 404, 409, 429])
        open.post("invites/accept", accept) { request, context in
            let body = try await Self.fields(request, ["code", "name", "password"])
            let keys = [Self.clientAddress(context)]
            let throttle = try Self.throttle(context)
            if throttle.attempt(keys) != nil { throw APIError(.tooManyRequests, "slow_down", "too many failed tries; wait a little") }
            do {
                // A ledger that does not exist answers as an unknown code does.
                guard let credentials = context.credentials else {
                    try MemberStore.checkName(body["name"] ?? "")
                    try MemberStore.checkPassword(body["password"] ?? "")
                    throw MemberStore.unknownInvitation
                }
                let session = try await BlockingThreads.run {
                    try credentials.members.accept(body["code"] ?? "", name: body["name"] ?? "", password: body["password"] ?? "")
                }
                throttle.succeeded(keys)
                try await credentials.afterChange?()
                return Self.signedIn(session, credentials, request, status: .created)
            } catch {
                throttle.failed(keys)
                throw error
            }
        }
        // On the public group (no scope needed: a read-only member signs out too), with a caller.
        let signOut = APIOperation(
            "Sign out (the session ends everywhere it was copied) and clear the cookie.", responses: [(204, APIResponse.text("Signed out."))])
        open.delete("session", signOut) { request, context in
            let credentials = try Self.credentials(context)
            if case .member = context.caller, let secret = SessionCookie.value(in: request) {
                try credentials.members.signOut(secret)
                try await credentials.afterChange?()
            }
            return Response(status: .noContent, headers: [.setCookie: SessionCookie.header(nil, path: credentials.apiPath, request: request)])
        }
        group.get("members", APIOperation("The household's members: {items: [{name, role, createdAt}]}.", responses: [(200, APIResponse.text("The members."))]))
        {
            _, context in
            let members = try Self.credentials(context).members.all()
            return json(
                .object([
                    (
                        "items",
                        .array(
                            members.map { .object([("name", .string($0.name)), ("role", .string($0.role.rawValue)), ("createdAt", .string($0.createdAt))]) })
                    )
                ]))
        }
        let invite = APIOperation(
            "An owner's one-time invitation (7 days): {code, role, expiresAt}. Only a signed-in owner.",
            body: APIBody.jsonSchema("{type: object, additionalProperties: false, properties: {role: {type: string, enum: [owner, member, read-only]}}}"),
            responses: [(201, APIResponse.text("The invitation."))], errors: [400, 403])
        group.post("members/invites", invite) { request, context in
            let owner = try Self.owner(context)
            let body = try await Self.fields(request, ["role"])
            guard let role = MemberRole(rawValue: body["role"] ?? "member") else {
                throw ValidationError(field: "role", "owner, member or read-only")
            }
            let credentials = try Self.credentials(context)
            let invitation = try credentials.members.invite(role: role, by: owner.name)
            try await credentials.afterChange?()
            return json(
                .object([
                    ("code", .string(invitation.code)), ("role", .string(role.rawValue)),
                    ("expiresAt", .string(ISO8601DateFormatter().string(from: invitation.expiresAt))),
                ]), status: .created)
        }
        // The name in the query (`?name=Kim%20Lee`): a member's name may hold spaces and any
        // letters, and paths of this API are never percent-encoded.
        let remove = APIOperation(
            "Remove a member (an owner only; never the last owner): their sessions end at once, and the invitations they made are withdrawn.",
            parameters: [APIParameter.query("name", required: true, schema: "{type: string, maxLength: 64}")],
            responses: [(204, APIResponse.text("Removed."))], errors: [403, 404, 409])
        group.delete("members", remove) { request, context in
            _ = try Self.owner(context)
            guard let name = request.uri.queryParameters.get("name") else { throw ValidationError(field: "name", "give the member: ?name=NAME") }
            let credentials = try Self.credentials(context)
            guard try credentials.members.remove(name) else { throw APIError(.notFound, "not_found", "no member named '\(name)'") }
            try await credentials.afterChange?()
            return Response(status: .noContent)
        }
    }

    static func credentials(_ context: TallyRequestContext) throws -> LedgerCredentials {
        guard let credentials = context.credentials else { throw APIError(.unauthorized, "wrong_credentials", "wrong name or password") }
        return credentials
    }

    static func throttle(_ context: TallyRequestContext) throws -> SignInThrottle {
        guard let throttle = context.signIns else { throw APIError(.internalServerError, "internal", "no sign-in throttle") }
        return throttle
    }

    /// The caller, who must be an owner of the household.
    static func owner(_ context: TallyRequestContext) throws -> Member {
        guard case .member(let member, _) = context.caller, member.role == .owner else {
            throw APIError(.forbidden, "forbidden", "only an owner of the household, signed in, invites and removes members")
        }
        return member
    }

    /// The string fields `names` of a JSON object body (others refused).
    static func fields(_ request: Request, _ names: Set<String>) async throws -> [String: String] {
        guard case .object(let members) = try await jsonBody(request, limit: 16 << 10, timeout: .seconds(30)) else {
            throw ValidationError(field: nil, "the body must be a JSON object", kind: .malformed)
        }
        var fields: [String: String] = [:]
        for (key, value) in members {
            guard names.contains(key) else { throw ValidationError(field: key, "unknown field", kind: .unknownField) }
            guard case .string(let text) = value else { throw ValidationError(field: key, "must be a string") }
            fields[key] = text
        }
        return fields
    }

    /// The answer to a sign-in: the member, the CSRF token writes echo, and the cookie.
    static func signedIn(_ session: MemberStore.NewSession, _ credentials: LedgerCredentials, _ request: Request, status: HTTPResponse.Status) -> Response {
        var response = json(
            .object([
                ("member", .string(session.member.name)), ("role", .string(session.member.role.rawValue)), ("csrf", .string(session.csrf)),
                ("expiresAt", .string(ISO8601DateFormatter().string(from: session.expiresAt))),
            ]), status: status)
        response.headers[.setCookie] = SessionCookie.header(session.secret, path: credentials.apiPath, request: request)
        return response
    }
}
