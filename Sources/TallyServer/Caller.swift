import TallyLedger

/// Who a request is from: a program holding a token, or a member of the household signed in
/// with a session cookie. Scopes, the actor recorded in events, and a change feed's limits and
/// revocation all read it.
public enum Caller: Sendable {
    case token(TokenRecord)
    case member(Member, SessionRecord)

    /// What it may do.
    public var scopes: [TokenScope] {
        switch self {
        case .token(let token): token.scopes
        case .member(let member, _): member.role.scopes
        }
    }

    /// Whether it is a signed-in member (not a token).
    var isMember: Bool {
        if case .member = self { true } else { false }
    }

    /// The actor of the events it writes: `token:NAME` or `member:NAME`.
    public var actor: String {
        switch self {
        case .token(let token): "token:" + token.name
        case .member(let member, _): Ledger.memberActor(member.name)
        }
    }

    /// How it is named in messages.
    public var description: String {
        switch self {
        case .token(let token): "token '\(token.name)'"
        case .member(let member, _): "member '\(member.name)'"
        }
    }

    /// What its open change feeds are counted by: the token, or the session.
    var streamKey: String {
        switch self {
        case .token(let token): token.sha256
        case .member(_, let session): "session:" + session.sha256
        }
    }

    /// Whether it may still read: the token not revoked; the session not ended, expired or
    /// its member removed.
    func isCurrent(in service: TallyService) throws -> Bool {
        switch self {
        case .token(let token): try service.tokens.isCurrent(token)
        case .member(_, let session): try service.members.isCurrent(session)
        }
    }
}
