import Crypto
import Foundation
import TallyCore
import TallyLog

/// What a bearer token may do.
public enum TokenScope: String, Sendable, CaseIterable, Codable {
    case read, write, replicate
}

/// One token as stored: its name, scopes and the SHA-256 of its secret (never the secret).
public struct TokenRecord: Sendable, Codable, Equatable {
    public var name: String
    public var scopes: [TokenScope]
    public var sha256: String
    public var createdAt: String
}

/// `DATA_DIR/tokens.json`: this replica's API tokens (never replicated). Reloaded when the
/// file changes, so `tally token create|revoke` take effect on a running server at once.
public final class TokenStore: @unchecked Sendable {
    // @unchecked: `cache` is only touched under `lock`.
    let file: SecretFile<[TokenRecord]>
    private let lock = NSLock()
    private var cache: (version: FileVersion, tokens: [TokenRecord], bySecret: [String: TokenRecord])?

    public convenience init(directory: DataDirectory) { self.init(folder: directory.path) }

    /// The tokens of the data directory at `folder`, read without opening it (a hosted
    /// ledger's caller is authenticated before the ledger is opened).
    public init(folder: String) { file = SecretFile(path: folder + "/tokens.json", empty: []) }

    /// Every token record (re-read when the file's modification time changes).
    public func all() throws -> [TokenRecord] {
        try current().tokens
    }

    /// The record of a presented secret, if it is a current token. Secrets seen since the file
    /// last changed are remembered, so a request costs one `stat`, not a hash.
    public func authenticate(_ secret: String) throws -> TokenRecord? {
        let state = try current()
        if let known = state.bySecret[secret] { return known }
        let digest = Self.digest(secret)
        guard let record = state.tokens.first(where: { $0.sha256 == digest }) else { return nil }
        lock.withLock {
            if cache?.version == state.version, (cache?.bySecret.count ?? 0) < 1_000 { cache?.bySecret[secret] = record }
        }
        return record
    }

    private func current() throws -> (version: FileVersion, tokens: [TokenRecord], bySecret: [String: TokenRecord]) {
        let version = FileVersion(path: file.path)
        return try lock.withLock {
            if let cache, cache.version == version { return cache }
            cache = (version, try file.read(), [:])
            return cache!
        }
    }

    /// Whether `record` is still a current token (not revoked): what an open stream asks
    /// before each batch, at the cost of a `stat` while the file is unchanged.
    public func isCurrent(_ record: TokenRecord) throws -> Bool {
        try current().tokens.contains { $0.sha256 == record.sha256 }
    }

    /// What a token's name may be: it becomes the actor "token:NAME" of every write made with
    /// it, so it passes the actor rule — 1 to 64 characters, no control characters.
    public static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.count) && (try? EntitySchema.validateActor("token:" + name)) != nil
    }

    public static let nameRule = "1 to 64 characters, at most \(Limits.maxActorBytes - 6) bytes, no control characters"

    /// Creates a token and returns its secret, which is shown once and stored only as a hash.
    public func create(name: String, scopes: [TokenScope]) throws -> String {
        let (secret, record) = try Self.make(name: name, scopes: scopes)
        try add(record)
        return secret
    }

    /// A new token's secret and the record that stores its hash, not stored yet (the CLI on a
    /// cluster sends the record to the node that serves the ledger: `CredentialEdit`).
    public static func make(name: String, scopes: [TokenScope]) throws -> (secret: String, record: TokenRecord) {
        guard isValidName(name) else { throw LogError.rejected(reason: "invalid token name: \(nameRule)") }
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        let secret =
            "tly_"
            + Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return (secret, TokenRecord(name: name, scopes: scopes, sha256: digest(secret), createdAt: ISO8601DateFormatter().string(from: Date())))
    }

    /// Stores a token made by `make`; refuses a name taken.
    public func add(_ record: TokenRecord) throws {
        guard Self.isValidName(record.name) else { throw LogError.rejected(reason: "invalid token name: \(Self.nameRule)") }
        try file.update { tokens in
            guard !tokens.contains(where: { $0.name == record.name }) else {
                throw LogError.rejected(reason: "a token named '\(record.name)' exists; revoke it first")
            }
            tokens.append(record)
        }
        lock.withLock { cache = nil }
    }

    /// Removes a token by name; false if there was none.
    public func revoke(name: String) throws -> Bool {
        let removed = try file.update { tokens in
            guard let index = tokens.firstIndex(where: { $0.name == name }) else { return false }
            tokens.remove(at: index)
            return true
        }
        lock.withLock { cache = nil }
        return removed
    }

    static func digest(_ secret: String) -> String {
        Hex.lowercase(SHA256.hash(data: Data(secret.utf8)))
    }
}
