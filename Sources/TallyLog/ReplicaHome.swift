import Foundation
import TallyCore

/// Where a replica's folder was when it was last opened — the file system (device) and the
/// file (inode) of its `replica.json` — kept in `DATA_DIR/replica-home.json`. A folder that a
/// backup restored (on a second phone), a copy (`cp -r`, a synced folder) or a move to another
/// disk holds a `replica.json` that is another file: then this folder may be one of two live
/// copies of one replica, which would write two different events under one origin and
/// sequence. `DataDirectory.takeNewIdentity` gives such a copy an identity of its own.
///
/// What it cannot see: a copy that keeps its inode (a whole-disk or VM snapshot started
/// again). That copy is caught at its first sync instead (docs/TALLYKIT.md, "Restored copies").
public struct ReplicaHome: Codable, Sendable, Equatable {
    public var device: UInt64
    public var inode: UInt64

    /// Where `directory`'s `replica.json` is now.
    public static func current(_ directory: DataDirectory) throws -> ReplicaHome {
        var info = stat()
        guard stat(directory.path + "/replica.json", &info) == 0 else {
            throw LogError.io(operation: "stat", path: directory.path + "/replica.json", errno: errno)
        }
        return ReplicaHome(device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino))
    }

    static func path(_ directory: DataDirectory) -> String { directory.path + "/replica-home.json" }

    /// Where it was last opened; nil for a folder that never recorded it (made before this
    /// existed, or never opened by an app).
    public static func recorded(_ directory: DataDirectory) -> ReplicaHome? {
        FileManager.default.contents(atPath: path(directory)).flatMap { try? JSONDecoder().decode(ReplicaHome.self, from: $0) }
    }

    /// Records where the folder is now.
    public static func record(_ directory: DataDirectory) throws {
        try writeDurably(try JSONEncoder().encode(try current(directory)), to: path(directory), mode: 0o600)
    }

    /// Whether the folder is not where it was last opened (false when nothing was recorded).
    public static func hasMoved(_ directory: DataDirectory) throws -> Bool {
        guard let recorded = recorded(directory) else { return false }
        return try current(directory) != recorded
    }
}

extension DataDirectory {
    /// Gives this replica a new identity — a new replica id and signing key — keeping its log:
    /// the events it wrote so far stay those of its former origin (whose key is pinned for it,
    /// so they verify as any peer's), and its next writes start a chain of the new origin.
    /// For a folder that may be a copy of a live replica (`ReplicaHome`), before it writes:
    /// the copy and the original then never write two events under one origin and sequence.
    ///
    /// Crash-safe by order: the former key is pinned, then the new key and identity are
    /// written, and the new home is recorded last — a crash before that starts over at the next
    /// open (the former origin's pin is kept; a second new identity replaces the first, which
    /// had written nothing). Call it without the writer open.
    /// `beforeHome` runs once the new identity is written and before the home is recorded
    /// (a caller's note of the change, which a crash then cannot lose).
    public func takeNewIdentity(beforeHome: (_ former: ReplicaIdentity, _ now: DataDirectory) throws -> Void = { _, _ in }) throws -> (
        former: ReplicaIdentity, now: DataDirectory
    ) {
        let former = identity
        if let key = try ReplicaSigningKey.read(from: signingKeyPath) {
            let pins = originKeys
            if try pins.keys()[former.origin] == nil { try pins.trust(key.publicKey, for: former.origin) }
        }
        try ReplicaSigningKey.generate().write(to: signingKeyPath)
        var identity = former
        identity.replicaId = ReplicaID.random().description
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try writeDurably(try encoder.encode(identity), to: path + "/replica.json")
        let now = try DataDirectory(path: path)
        try beforeHome(former, now)
        try ReplicaHome.record(now)
        return (former, now)
    }
}
