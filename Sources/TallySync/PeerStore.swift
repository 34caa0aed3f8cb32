import Foundation
import TallyLog

/// A replica this one syncs with.
public struct Peer: Codable, Sendable, Equatable {
    public var name: String
    /// Base URL of the peer's service, e.g. `http://192.168.0.5:8080`.
    public var url: String
    /// A token of the peer's with the `replicate` scope.
    public var token: String

    public init(name: String, url: String, token: String) {
        (self.name, self.url, self.token) = (name, url, token)
    }
}

/// `DATA_DIR/peers.json` (mode 0600): the configured peers and their tokens.
public struct PeerStore: Sendable {
    let path: String

    public init(directory: DataDirectory) { path = directory.path + "/peers.json" }

    public func all() throws -> [Peer] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return try JSONDecoder().decode([Peer].self, from: data)
    }

    public func add(_ peer: Peer) throws {
        guard URL(string: peer.url)?.scheme.map({ ["http", "https"].contains($0) }) == true else {
            throw LogError.rejected(reason: "peer URL must start with http:// or https://")
        }
        var peers = try all()
        guard !peers.contains(where: { $0.name == peer.name }) else { throw LogError.rejected(reason: "a peer named '\(peer.name)' exists; remove it first") }
        peers.append(peer)
        try save(peers)
    }

    public func remove(name: String) throws -> Bool {
        var peers = try all()
        guard let index = peers.firstIndex(where: { $0.name == name }) else { return false }
        peers.remove(at: index)
        try save(peers)
        return true
    }

    private func save(_ peers: [Peer]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try writeDurably(try encoder.encode(peers), to: path)
        chmod(path, 0o600)
    }
}
