import Crypto
import Foundation
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
    let path: String
    private let lock = NSLock()
    private var cache: (modified: Date, tokens: [TokenRecord])?

    public init(directory: DataDirectory) { path = directory.path + "/tokens.json" }

    /// Every token record.
    public func all() throws -> [TokenRecord] {
        let modified = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? .distantPast
        return try lock.withLock {
            if let cache, cache.modified == modified { return cache.tokens }
            let tokens = try FileManager.default.contents(atPath: path).map { try JSONDecoder().decode([TokenRecord].self, from: $0) } ?? []
            cache = (modified, tokens)
            return tokens
        }
    }

    /// The record of a presented secret, if it is a current token.
    public func authenticate(_ secret: String) throws -> TokenRecord? {
        let digest = Self.digest(secret)
        return try all().first { $0.sha256 == digest }
    }

    /// Creates a token and returns its secret, which is shown once and stored only as a hash.
    public func create(name: String, scopes: [TokenScope]) throws -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        let secret = "tly_" + Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        var tokens = try all()
        guard !tokens.contains(where: { $0.name == name }) else { throw LogError.rejected(reason: "a token named '\(name)' exists; revoke it first") }
        tokens.append(TokenRecord(name: name, scopes: scopes, sha256: Self.digest(secret), createdAt: ISO8601DateFormatter().string(from: Date())))
        try save(tokens)
        return secret
    }

    /// Removes a token by name; false if there was none.
    public func revoke(name: String) throws -> Bool {
        var tokens = try all()
        guard let index = tokens.firstIndex(where: { $0.name == name }) else { return false }
        tokens.remove(at: index)
        try save(tokens)
        return true
    }

    private func save(_ tokens: [TokenRecord]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try writeDurably(try encoder.encode(tokens), to: path)
        chmod(path, 0o600)
        lock.withLock { cache = nil }
    }

    static func digest(_ secret: String) -> String { SHA256.hash(data: Data(secret.utf8)).map { String(format: "%02x", $0) }.joined() }
}
