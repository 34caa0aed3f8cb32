import Foundation

/// A small JSON file of secrets in the data directory — `tokens.json` (token hashes),
/// `peers.json` (peer tokens in plain text), `server.json` — readable by its owner only from
/// its first byte (`writeDurably` with mode 0600), and changed only under an exclusive lock on
/// `NAME.lock`, so two processes changing it at once (two `tally token create`) cannot lose
/// each other's change.
public struct SecretFile<Contents: Codable & Sendable>: Sendable {
    /// The file.
    public let path: String
    /// What a missing file holds.
    let empty: Contents

    public init(path: String, empty: Contents) {
        self.path = path
        self.empty = empty
    }

    /// The contents (`empty` if there is no file yet).
    public func read() throws -> Contents {
        guard let data = FileManager.default.contents(atPath: path) else { return empty }
        return try JSONDecoder().decode(Contents.self, from: data)
    }

    /// Reads, changes and writes the file back (0600, durably) under its lock; returns what
    /// `change` returns. Nothing is written if `change` throws.
    public func update<Result>(_ change: (inout Contents) throws -> Result) throws -> Result {
        let lock = try FileLock(path: path + ".lock", timeout: 10)
        defer { lock.release() }
        var contents = try read()
        let result = try change(&contents)
        try write(contents)
        return result
    }

    /// Replaces the contents (under the lock).
    public func replace(with contents: Contents) throws {
        try update { $0 = contents }
    }

    private func write(_ contents: Contents) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try writeDurably(try encoder.encode(contents), to: path, mode: 0o600)
    }
}
