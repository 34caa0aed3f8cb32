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

    /// `url` as it may be shown or used as a name: scheme, host, port and path only — no user,
    /// password, query or fragment, where a credential could hide.
    public static func displayURL(_ url: String) -> String {
        guard let parsed = URLComponents(string: url), let scheme = parsed.scheme, let host = parsed.host else { return "(unreadable URL)" }
        var shown = URLComponents()
        (shown.scheme, shown.host, shown.port, shown.path) = (scheme, host, parsed.port, parsed.path)
        return shown.string ?? "(unreadable URL)"
    }
}

/// `DATA_DIR/peers.json` (mode 0600): the configured peers and their tokens.
public struct PeerStore: Sendable {
    let file: SecretFile<[Peer]>

    public init(directory: DataDirectory) { file = SecretFile(path: directory.path + "/peers.json", empty: []) }

    public func all() throws -> [Peer] { try file.read() }

    public func add(_ peer: Peer) throws {
        guard URL(string: peer.url)?.scheme.map({ ["http", "https"].contains($0) }) == true else {
            throw LogError.rejected(reason: "peer URL must start with http:// or https://")
        }
        try file.update { peers in
            guard !peers.contains(where: { $0.name == peer.name }) else {
                throw LogError.rejected(reason: "a peer named '\(peer.name)' exists; remove it first")
            }
            peers.append(peer)
        }
    }

    public func remove(name: String) throws -> Bool {
        try file.update { peers in
            guard let index = peers.firstIndex(where: { $0.name == name }) else { return false }
            peers.remove(at: index)
            return true
        }
    }
}
