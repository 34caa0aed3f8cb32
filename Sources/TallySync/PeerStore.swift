import Foundation
import TallyCore
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

    /// Adds `peer`, refused unless it can be reached: a name of 1 to 64 printable characters,
    /// an `http(s)://` URL with a host (and a port of 1 to 65535 if it names one), and a token
    /// without control characters — what is stored is printed by `peers list` and logged.
    public func add(_ peer: Peer) throws {
        guard (1...64).contains(peer.name.count), !ControlCharacters.occur(in: peer.name) else {
            throw LogError.rejected(reason: "a peer's name is 1 to 64 characters, without control characters")
        }
        guard !ControlCharacters.occur(in: peer.url), let url = URLComponents(string: peer.url),
            url.scheme.map({ ["http", "https"].contains($0.lowercased()) }) == true, !(url.host ?? "").isEmpty,
            Self.portIsValid(in: peer.url)
        else {
            throw LogError.rejected(reason: "a peer's URL is http://HOST[:PORT]/… or https://…, with a host and a port of 1 to 65535")
        }
        guard !ControlCharacters.occur(in: peer.token) else { throw LogError.rejected(reason: "a peer's token has no control characters") }
        try file.update { peers in
            guard !peers.contains(where: { $0.name == peer.name }) else {
                throw LogError.rejected(reason: "a peer named '\(peer.name)' exists; remove it first")
            }
            peers.append(peer)
        }
    }

    /// Whether the port `url` names, as written, is 1 to 65535 (or it names none): Foundation
    /// reads a port past `Int.max` as no port at all, and the sync would then go to port 80.
    static func portIsValid(in url: String) -> Bool {
        guard let rest = url.range(of: "://").map({ url[$0.upperBound...] }) else { return false }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostAndPort = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
        let afterHost = hostAndPort.hasPrefix("[") ? hostAndPort.drop { $0 != "]" }.dropFirst() : hostAndPort.drop { $0 != ":" }
        guard afterHost.hasPrefix(":") else { return afterHost.isEmpty }
        let digits = afterHost.dropFirst()
        return (1...5).contains(digits.count) && digits.allSatisfy(\.isASCII) && Int(digits).map { (1...65_535).contains($0) } == true
    }

    public func remove(name: String) throws -> Bool {
        try file.update { peers in
            guard let index = peers.firstIndex(where: { $0.name == name }) else { return false }
            peers.remove(at: index)
            return true
        }
    }
}
