import Crypto
import Foundation
import HummingbirdBcrypt
import Synchronization
import TallyCore
import TallyLedger
import TallyLog

/// What a member of a household may do.
public enum MemberRole: String, Sendable, Codable, CaseIterable {
    /// Reads and writes, and invites and removes members.
    case owner
    /// Reads and writes.
    case member
    /// Reads.
    case readOnly = "read-only"

    /// The scopes a signed-in member of this role has.
    public var scopes: [TokenScope] { self == .readOnly ? [.read] : [.read, .write] }
}

/// A person of the household, as stored: name, role and a bcrypt hash of the password (never
/// the password).
public struct Member: Sendable, Codable, Equatable {
    public var name: String
    public var role: MemberRole
    public var passwordHash: String
    public var createdAt: String
}

/// A signed-in member's session, as stored: the SHA-256 of its secret (the cookie's value,
/// never stored), whose it is, the token a write must echo (`X-CSRF-Token`), and when it ends.
public struct SessionRecord: Sendable, Codable, Equatable {
    public var sha256: String
    public var member: String
    public var csrf: String
    public var expiresAt: Date
}

/// A one-time invitation: the SHA-256 of its code, the role it gives, who made it, until
/// when it may be used, and whether it was.
public struct Invitation: Sendable, Codable, Equatable {
    public var sha256: String
    public var role: MemberRole
    public var invitedBy: String
    public var expiresAt: Date
    public var used: Bool
}

/// The members of one ledger and their sessions and invitations: `members.json`,
/// `sessions.json` and `invites.json` in its data directory (0600, never replicated), read
/// without opening the ledger (a hosted ledger's caller is authenticated before it is opened).
///
/// Passwords are hashed with bcrypt (hummingbird-auth's `Bcrypt`, cost 12 — about a quarter
/// of a second here, on the blocking threads); session secrets and invitation codes are 256
/// random bits, stored as SHA-256.
public final class MemberStore: Sendable {
    let folder: String
    let members: SecretFile<[Member]>
    let sessions: SecretFile<[SessionRecord]>
    let invitations: SecretFile<[Invitation]>
    /// bcrypt's cost: 12 in service, lower in tests.
    public let cost: UInt8

    /// How long a session lasts from sign-in.
    public static let sessionLifetime: TimeInterval = 30 * 86_400
    /// How long an invitation may be used.
    public static let invitationLifetime: TimeInterval = 7 * 86_400
    /// The most members, sessions and open invitations a ledger keeps.
    public static let maxMembers = 100, maxSessions = 1_000, maxInvitations = 100
    /// The most sessions one member keeps (`maxMembers` of them fill `maxSessions`): a member
    /// who signs in again and again ends only their own oldest sessions.
    public static let maxSessionsPerMember = 10

    public init(folder: String, cost: UInt8 = 12) {
        self.folder = folder
        members = SecretFile(path: folder + "/members.json", empty: [])
        sessions = SecretFile(path: folder + "/sessions.json", empty: [])
        invitations = SecretFile(path: folder + "/invites.json", empty: [])
        self.cost = cost
    }

    public convenience init(directory: DataDirectory, cost: UInt8 = 12) { self.init(folder: directory.path, cost: cost) }

    // MARK: Members

    public func all() throws -> [Member] { try members.read() }

    /// Adds a member; refuses a name taken, a name or password out of rule.
    public func add(_ name: String, role: MemberRole, password: String) throws {
        try add(try Self.member(name, role: role, password: password, cost: cost))
    }

    /// A new member with their password hashed at `cost`, not stored yet (the CLI on a cluster
    /// sends it to the node that serves the ledger: `CredentialEdit`); refuses a name or
    /// password out of rule.
    public static func member(_ name: String, role: MemberRole, password: String, cost: UInt8 = 12) throws -> Member {
        try checkName(name)
        try checkPassword(password)
        let hash = Bcrypt.hash(bcryptInput(password), cost: cost)
        return Member(name: name, role: role, passwordHash: hash, createdAt: ISO8601DateFormatter().string(from: Date()))
    }

    /// Stores a member made by `member(_:role:password:)`; refuses a name taken or a household full.
    public func add(_ member: Member) throws {
        try Self.checkName(member.name)
        try members.update { members in
            guard !members.contains(where: { $0.name == member.name }) else {
                throw ValidationError(field: "name", "a member named '\(member.name)' exists", kind: .alreadyExists)
            }
            try self.checkRoom(for: members)
            members.append(member)
        }
    }

    /// Removes a member, ends their sessions and withdraws the invitations they made; false if
    /// there was none. The household's last owner is never removed (checked under the file's
    /// lock, so two owners removing each other at once leave one).
    public func remove(_ name: String) throws -> Bool {
        let removed = try members.update { members in
            guard let index = members.firstIndex(where: { $0.name == name }) else { return false }
            if members[index].role == .owner, members.filter({ $0.role == .owner }).count == 1 {
                throw ValidationError(field: "name", "'\(name)' is the household's only owner; make another owner first", kind: .conflictsWithState)
            }
            members.remove(at: index)
            return true
        }
        if removed {
            try sessions.update { $0.removeAll { $0.member == name } }
            try invitations.update { $0.removeAll { $0.invitedBy == name } }
        }
        return removed
    }

    /// Throws when `members` leave no room for one more: `maxMembers`, or the ledger's quota.
    func checkRoom(for members: [Member]) throws {
        let limit = min(Self.maxMembers, (try LedgerQuota.read(folder: folder)).members ?? .max)
        guard members.count < limit else { throw ValidationError(field: "name", "this household has its \(limit) members (its quota); remove one first") }
    }

    /// A member's name: 1 to 64 characters, no control or directional characters, not blank;
    /// and short enough in bytes that "member:NAME", who every write of theirs is recorded as,
    /// passes the actor rule (64 Hangul syllables are 192 bytes: such a member could sign in
    /// and never write).
    static func checkName(_ name: String) throws {
        guard (1...64).contains(name.count), name.trimmingCharacters(in: .whitespaces) == name, !name.isEmpty,
            !FieldKind.containsControlCharacter(name),
            !name.unicodeScalars.contains(where: { (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value) }),
            (try? EntitySchema.validateActor(Ledger.memberActor(name))) != nil
        else {
            throw ValidationError(
                field: "name",
                "a member's name is 1 to 64 characters and at most \(Limits.maxActorBytes - 7) bytes, without control characters or surrounding blanks")
        }
    }

    /// A password: 10 to 200 characters, no control characters (bcrypt's C string would end at
    /// a NUL: "\u{0}x" and "" must not be one password); bcrypt reads 72 bytes, so a longer one
    /// is hashed first.
    static func checkPassword(_ password: String) throws {
        guard (10...200).contains(password.count), !FieldKind.containsControlCharacter(password) else {
            throw ValidationError(field: "password", "a password is 10 to 200 characters, without control characters")
        }
    }

    /// What bcrypt hashes: the password, or for one longer than bcrypt reads (72 bytes) its SHA-256.
    static func bcryptInput(_ password: String) -> String {
        password.utf8.count <= 72 ? password : Hex.lowercase(SHA256.hash(data: Data(password.utf8)))
    }

    // MARK: Sessions

    /// A new session of `member`: its secret (the cookie's value, shown once) and its CSRF token.
    public struct NewSession: Sendable {
        public let secret: String
        public let csrf: String
        public let member: Member
        public let expiresAt: Date
    }

    /// Checks `name` and `password`; a new session if they match (nil otherwise — the same
    /// work whether or not the name exists, so the time taken does not tell).
    public func signIn(_ name: String, password: String, now: Date = Date()) throws -> NewSession? {
        let member = try members.read().first { $0.name == name }
        let matches = Bcrypt.verify(Self.bcryptInput(password), hash: member?.passwordHash ?? Self.decoyHash(cost: cost))
        // No password has a control character (`checkPassword`): one sent with a NUL is not
        // cut short to match.
        guard let member, matches, !FieldKind.containsControlCharacter(password) else { return nil }
        // Removed (or added again) while the password was checked: as a wrong password.
        return try startSession(for: member, now: now)
    }

    /// The same bcrypt work as a sign-in at `cost`, for a request whose ledger does not exist.
    static func checkDecoy(_ password: String, cost: UInt8) { _ = Bcrypt.verify(bcryptInput(password), hash: decoyHash(cost: cost)) }

    /// A hash of nothing anyone knows at `cost` (made once per cost), checked when the name is
    /// unknown: as slow to check as a member's password.
    static func decoyHash(cost: UInt8) -> String {
        if let known = decoyHashes.withLock({ $0[cost] }) { return known }
        let hash = Bcrypt.hash(Hex.lowercase(Array((0..<32).map { _ in UInt8.random(in: 0...255) })), cost: cost)
        return decoyHashes.withLock { known in
            if let first = known[cost] { return first }  // made meanwhile by another sign-in
            known[cost] = hash
            return hash
        }
    }
    private static let decoyHashes = Mutex<[UInt8: String]>([:])

    /// Starts a session of `member`, as they were when their password was checked: nil if
    /// they were removed meanwhile, or removed and added again — checked under
    /// the sessions' lock, so a sign-in under way while an owner removes them cannot store a
    /// session after `remove` ended theirs (it would come back with a new member of that name).
    /// A member keeps at most `maxSessionsPerMember`: a further sign-in ends their own oldest,
    /// never another member's.
    func startSession(for member: Member, now: Date) throws -> NewSession? {
        let secret = Self.randomSecret(), csrf = Self.randomSecret()
        let expiresAt = now.addingTimeInterval(Self.sessionLifetime)
        let started = try sessions.update { sessions -> Bool in
            guard try members.read().contains(where: { $0.name == member.name && $0.passwordHash == member.passwordHash }) else { return false }
            sessions.removeAll { $0.expiresAt <= now }
            let theirs = sessions.filter { $0.member == member.name }
            let ending = Set(theirs.prefix(max(0, theirs.count - Self.maxSessionsPerMember + 1)).map(\.sha256))  // their oldest
            sessions.removeAll { ending.contains($0.sha256) }
            if sessions.count >= Self.maxSessions { sessions.removeFirst(sessions.count - Self.maxSessions + 1) }  // the oldest end
            sessions.append(SessionRecord(sha256: Self.digest(secret), member: member.name, csrf: csrf, expiresAt: expiresAt))
            return true
        }
        guard started else { return nil }
        return NewSession(secret: secret, csrf: csrf, member: member, expiresAt: expiresAt)
    }

    /// The member and session a cookie's secret stands for; nil if it is unknown, ended,
    /// expired, or its member was removed.
    public func session(_ secret: String, now: Date = Date()) throws -> (member: Member, record: SessionRecord)? {
        let digest = Self.digest(secret)
        guard let record = try sessions.read().first(where: { $0.sha256 == digest }), record.expiresAt > now,
            let member = try members.read().first(where: { $0.name == record.member })
        else { return nil }
        return (member, record)
    }

    /// Whether a session is still current (an open change feed asks before each batch).
    public func isCurrent(_ record: SessionRecord, now: Date = Date()) throws -> Bool {
        guard record.expiresAt > now, try members.read().contains(where: { $0.name == record.member }) else { return false }
        return try sessions.read().contains { $0.sha256 == record.sha256 }
    }

    /// Ends the session `secret` stands for.
    public func signOut(_ secret: String) throws {
        let digest = Self.digest(secret)
        try sessions.update { $0.removeAll { $0.sha256 == digest } }
    }

    // MARK: Invitations

    /// A one-time invitation to join as `role`, made by the owner named `owner`: its code (shown
    /// once). Refused unless `owner` is still an owner when it is stored — checked under the
    /// invitations' lock, so an owner removed while their request was on its way (`remove`
    /// withdraws what they made, once) cannot leave one behind.
    public func invite(role: MemberRole, by owner: String, now: Date = Date()) throws -> (code: String, expiresAt: Date) {
        let (code, invitation) = Self.invitation(role: role, by: owner, now: now)
        try add(invitation, now: now) {
            guard try members.read().contains(where: { $0.name == owner && $0.role == .owner }) else {
                throw APIError(.forbidden, "forbidden", "only an owner of the household invites; '\(owner)' is not one now")
            }
        }
        return (code, invitation.expiresAt)
    }

    /// A new invitation's code and the record that stores its hash, not stored yet (the CLI on
    /// a cluster sends it to the node that serves the ledger: `CredentialEdit`).
    public static func invitation(role: MemberRole, by owner: String, now: Date = Date()) -> (code: String, invitation: Invitation) {
        let code = randomSecret()
        return (code, Invitation(sha256: digest(code), role: role, invitedBy: owner, expiresAt: now.addingTimeInterval(invitationLifetime), used: false))
    }

    /// Stores an invitation made by `invitation(role:by:)` (the used and expired ones dropped),
    /// once `check` (run under the invitations' lock) has passed.
    public func add(_ invitation: Invitation, now: Date = Date(), check: () throws -> Void = {}) throws {
        try invitations.update { invitations in
            try check()
            invitations.removeAll { $0.used || $0.expiresAt <= now }
            guard invitations.count < Self.maxInvitations else { throw ValidationError(field: nil, "at most \(Self.maxInvitations) invitations may be open") }
            invitations.append(invitation)
        }
    }

    /// Joins with an invitation's code as a new member `name`, signed in. Refused (nothing
    /// changed) for a code unknown, used or expired, or a name taken; the code is spent only
    /// when the member is made.
    public func accept(_ code: String, name: String, password: String, now: Date = Date()) throws -> NewSession {
        try Self.checkName(name)
        try Self.checkPassword(password)
        let digest = Self.digest(code)
        // The code is looked at before any bcrypt work: a stranger's guess costs a file read.
        guard try invitations.read().contains(where: { $0.sha256 == digest && !$0.used && $0.expiresAt > now }) else { throw Self.unknownInvitation }
        let hash = Bcrypt.hash(Self.bcryptInput(password), cost: cost)
        let member = try invitations.update { invitations -> Member in
            guard let index = invitations.firstIndex(where: { $0.sha256 == digest && !$0.used && $0.expiresAt > now }) else {
                throw Self.unknownInvitation
            }
            let member = Member(name: name, role: invitations[index].role, passwordHash: hash, createdAt: ISO8601DateFormatter().string(from: now))
            try members.update { members in
                guard !members.contains(where: { $0.name == name }) else {
                    throw ValidationError(field: "name", "a member named '\(name)' exists", kind: .alreadyExists)
                }
                try self.checkRoom(for: members)
                members.append(member)
            }
            invitations[index].used = true
            return member
        }
        guard let session = try startSession(for: member, now: now) else { throw Self.signedOut }
        return session
    }

    /// A session asked for a member who is no longer as their password was checked.
    static let signedOut = APIError(.unauthorized, "signed_out", "the member was removed meanwhile: sign in again")

    static let unknownInvitation = ValidationError(field: "code", "this invitation is unknown, used or expired; ask for a new one", kind: .notFound)

    static func randomSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return Hex.lowercase((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    static func digest(_ secret: String) -> String { Hex.lowercase(SHA256.hash(data: Data(secret.utf8))) }
}
