import Foundation
import TallyCore
import TallyLog

/// Per origin, the highest contiguous sequence a replica holds. What one replica sends
/// another so it gets exactly what it lacks. Local-only chains are never part of it.
public struct VersionVector: Sendable, Equatable, Codable {
    /// Highest sequence held, per origin.
    public var sequences: [ReplicaID: UInt64]

    /// Creates a vector.
    public init(_ sequences: [ReplicaID: UInt64] = [:]) { self.sequences = sequences }

    /// The vector of a log's head, leaving out the replica's own local-only chain.
    public init(head: LogHead, excluding localOnlyOrigin: ReplicaID?) {
        sequences = head.chains.filter { $0.key != localOnlyOrigin }.mapValues(\.sequence)
    }

    /// This replica's vector.
    public init(of directory: DataDirectory) throws {
        self.init(head: try directory.reader.head(), excluding: directory.identity.localOnlyOrigin)
    }

    /// Sequence held for `origin` (0 if none).
    public subscript(origin: ReplicaID) -> UInt64 { sequences[origin] ?? 0 }

    /// True if this holds everything `other` holds.
    public func covers(_ other: VersionVector) -> Bool {
        other.sequences.allSatisfy { self[$0.key] >= $0.value }
    }

    // JSON: {"origins": {"<uuid>": <sequence>, …}}, keys sorted.
    private enum CodingKeys: String, CodingKey { case origins }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let raw = try container.decode([String: UInt64].self, forKey: .origins)
        var sequences: [ReplicaID: UInt64] = [:]
        for (key, value) in raw {
            guard let origin = ReplicaID(string: key) else {
                throw Swift.DecodingError.dataCorruptedError(forKey: .origins, in: container, debugDescription: "'\(key)' is not a replica id")
            }
            sequences[origin] = value
        }
        self.sequences = sequences
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Dictionary(uniqueKeysWithValues: sequences.map { ($0.key.description, $0.value) }), forKey: .origins)
    }

    /// Canonical JSON text.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try! encoder.encode(self), as: UTF8.self)
    }
}
