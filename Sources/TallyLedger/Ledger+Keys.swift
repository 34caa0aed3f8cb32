import Foundation
import TallyCore
import TallyLog
import TallySync

/// Signed origins (docs/MERGE.md): this replica's signing key and the keys it has pinned for
/// the origins it receives events of.
extension Ledger {
    /// Replaces this replica's signing key: a rotation signed by the old key is appended to
    /// the log (it travels to every replica with the events), and the old key is gone from disk.
    public func rotateSigningKey() async throws -> KeyRotation {
        try await blocking { [directory, writer] in try directory.rotateSigningKey(using: writer) }
    }

    /// This replica's public key, as peers pin it; nil before the log was first opened for
    /// writing (a data directory from before signing gets its key then).
    public static func publicKey(of directory: DataDirectory) throws -> OriginKey? {
        try ReplicaSigningKey.read(from: directory.signingKeyPath)?.publicKey
    }

    /// Pins `keyHex` for origin `originText` before first contact (`tally peers trust`): events
    /// claiming that origin are then accepted only under that key's signature.
    public static func trust(originText: String, keyHex: String, in directory: DataDirectory) throws {
        guard let origin = ReplicaID(string: originText) else { throw LogError.rejected(reason: "'\(originText)' is not a replica id (a UUID)") }
        guard let key = OriginKey(hex: keyHex) else { throw LogError.rejected(reason: "'\(keyHex)' is not a public key (64 hex digits)") }
        guard origin != directory.identity.origin, origin != directory.identity.localOnlyOrigin else {
            throw LogError.rejected(reason: "\(origin) is this replica's own origin; it signs that chain itself")
        }
        try directory.originKeys.trust(key, for: origin)
    }

    /// The pinned keys, by origin.
    public static func pinnedKeys(of directory: DataDirectory) throws -> [(origin: String, pin: PinnedOriginKey)] {
        try directory.originKeys.all().sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Verifies the whole log (`LogVerifier`: checksums, chains, seals, signatures) and that
    /// the keys the log shows agree with what this replica pinned and holds: the key of each
    /// origin's last signature is the one pinned for it, and this replica's own chain is signed
    /// by its own key.
    public static func verify(_ directory: DataDirectory, progress: (Int) -> Void = { _ in }) throws -> VerificationReport {
        var report = try LogVerifier.verify(directory: directory.logPath, progress: progress)
        let pins = try directory.originKeys.keys()
        let own = try ReplicaSigningKey.read(from: directory.signingKeyPath)?.publicKey
        for entry in report.authorship {
            guard let shown = entry.keys.last else { continue }
            let expected = entry.origin == directory.identity.origin ? own : pins[entry.origin]
            if let expected, expected != shown {
                report.findings.append(
                    VerificationFinding(
                        segment: "-", offset: 0, event: "\(entry.origin)",
                        problem:
                            "the log's signatures of this origin end with key \(shown), but \(entry.origin == directory.identity.origin ? "this replica's key is" : "the key pinned for it is") \(expected)"
                    ))
            }
        }
        return report
    }
}
