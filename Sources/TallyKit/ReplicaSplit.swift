import Foundation
import TallyCore
import TallyLedger
import TallyLog
import TallySync

/// Giving a copy of a replica its own identity (`Ledger+Copies`), as TallyKit does it to a
/// folder: at open, when the folder is not where the replica was last opened; at sync, when the
/// server holds another chain of this replica's origin. docs/TALLYKIT.md, "Restored copies".
enum ReplicaSplit {
    /// The folder a split is built in beside the replica's, and the file that says it is whole
    /// (holding `LogFiles` of the folder it replaces, as they were when it was made whole).
    static func staging(_ folder: String) -> String { folder + ".split" }
    static let completeMarker = "/split-complete"
    /// A change of identity made at open, until it is recorded in the log.
    static let pendingChange = "/identity-change.json"
    /// Where a replica keeps its members' sessions (`Replica.sessions`).
    static let sessionsFile = "/app-sessions.json"

    /// The lock beside the folder (`FOLDER.lock`) that a split holds from start to end and an
    /// open holds while it finishes a split, creates the folder or gives it a new identity: no
    /// open sees a split half done, and none creates a replica in the moment the folder is
    /// moved aside. Taken before the writer lock, never after.
    static func folderLock(_ folder: String, timeout: Double) throws -> FileLock {
        try FileLock(path: folder + ".lock", timeout: timeout)
    }

    /// The log's files and their sizes: any write changes them.
    struct LogFiles: Codable, Equatable {
        var sizes: [String: Int]

        init(of folder: String) throws {
            let log = folder + "/log"
            sizes = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: log) where name != "writer.lock" {
                sizes[name] = try FileManager.default.attributesOfItem(atPath: log + "/" + name)[.size] as? Int ?? -1
            }
        }
    }

    /// At open, with the writer lock held (the app and its widget may open a restored folder
    /// at once: one of them gives it the new identity, the other finds it done): a folder that
    /// moved takes a new identity in place — it has written nothing since it was copied, so its
    /// log holds a prefix of the other copy's chain, and nothing needs writing again. The change
    /// waits in `identity-change.json` until the caller has recorded it in the log.
    static func takeNewIdentityIfMoved(_ folder: String, lockTimeout: Double) throws {
        let directory = try DataDirectory(path: folder)
        if ReplicaHome.recorded(directory) != nil, try !ReplicaHome.hasMoved(directory) { return }
        let lock = try FileLock(path: directory.logPath + "/writer.lock", timeout: lockTimeout)
        defer { lock.release() }
        let locked = try DataDirectory(path: folder)  // as it is now that the lock is held
        guard ReplicaHome.recorded(locked) != nil else {
            try ReplicaHome.record(locked)  // a folder from before homes were recorded: here is home
            return
        }
        guard try ReplicaHome.hasMoved(locked) else { return }
        _ = try locked.takeNewIdentity { former, now in
            let change = Ledger.IdentityChange(
                formerOrigin: former.replicaId, newOrigin: now.identity.replicaId,
                detected: "at open: this folder is not where the replica was last opened (restored from a backup, or copied)")
            try writeDurably(try JSONEncoder().encode(change), to: folder + pendingChange, mode: 0o600)
        }
    }

    /// The change of identity made at open and not yet recorded in the log, if any.
    static func pendingChange(_ folder: String) -> Ledger.IdentityChange? {
        FileManager.default.contents(atPath: folder + pendingChange).flatMap { try? JSONDecoder().decode(Ledger.IdentityChange.self, from: $0) }
    }

    /// Finishes or undoes a split that a crash interrupted: one whose new folder is complete and
    /// whose old folder has not changed since is put in place; any other is removed (the old
    /// folder was not touched, or took writes since — a widget's — and stays what it is).
    /// Called with the folder lock held.
    static func finishInterrupted(_ folder: String) throws {
        let fileManager = FileManager.default
        let staging = staging(folder)
        if fileManager.fileExists(atPath: folder + completeMarker) { try fileManager.removeItem(atPath: folder + completeMarker) }
        guard fileManager.fileExists(atPath: staging) else { return }
        guard let marker = fileManager.contents(atPath: staging + completeMarker),
            let made = try? JSONDecoder().decode(LogFiles.self, from: marker),
            !fileManager.fileExists(atPath: folder) || (try? LogFiles(of: folder)) == made
        else {
            try fileManager.removeItem(atPath: staging)
            return
        }
        if fileManager.fileExists(atPath: folder) { try moveAside(folder) }
        try rename(staging, to: folder)
        try fileManager.removeItem(atPath: folder + completeMarker)
    }

    /// Keeps the replaced folder beside the new one (`FOLDER.replaced-<time>`): nothing of it
    /// is lost, and an app may delete it once it has seen the replica work. Its members'
    /// sessions went to the new folder (`moveSyncFiles`): their secrets do not stay here.
    static func moveAside(_ folder: String) throws {
        // Before the rename, so that no crash leaves the secrets in the folder moved aside. At
        // worst (the rename then fails and the split is undone) it costs a sign-in.
        try? FileManager.default.removeItem(atPath: folder + sessionsFile)
        try rename(folder, to: folder + ".replaced-" + String(Int(Date().timeIntervalSince1970)))
    }

    static func rename(_ from: String, to: String) throws {
        guard Foundation.rename(from, to) == 0 else { throw LogError.io(operation: "rename", path: from, errno: errno) }
        try syncFolder((to as NSString).deletingLastPathComponent)
    }
}

extension Replica {
    /// This folder and another hold one replica's identity and both wrote under it (the server
    /// said its chain differs): builds a new replica beside it from the server's history plus
    /// everything of this folder the server's chain lacks (`Ledger.takeOver`), records the
    /// change, and puts the new replica in this folder's place. The old folder is kept beside.
    ///
    /// The server's word is not taken for it: the new replica pulls with every key this folder
    /// pinned, and its own former key pinned for its former origin, so only events signed with
    /// this replica's own key — a copy's — count; when they show no other chain, nothing changes.
    func takeNewIdentity(syncingWith server: some ReplicaTransport, because forked: SyncRejection) async throws {
        let (actor, lockTimeout) = (actor, writer.lockTimeout)
        let folderLock = try await BlockingThreads.run { [path] in try ReplicaSplit.folderLock(path, timeout: lockTimeout) }
        defer { folderLock.release() }
        try await writer.exclusively { folder in
            let former = try DataDirectory(path: folder)
            // Another process (the app's widget) split the folder while this one waited for
            // the lock: it writes under a new origin already, and there is nothing to do.
            guard former.identity.origin == forked.forkedOrigin else { return }
            let staging = ReplicaSplit.staging(folder)
            if FileManager.default.fileExists(atPath: staging) { try FileManager.default.removeItem(atPath: staging) }
            let fresh = try DataDirectory.create(path: staging, name: former.identity.name)
            do {
                try Self.pinKeys(of: former, in: fresh)
                let ledger = try Ledger(directory: fresh)
                do {
                    // The other copy's chain, and the rest; attachments stay on the server (the
                    // copy's own are copied over by `takeOver`, the others' fetched when asked).
                    _ = try await ledger.sync(with: server, push: false, fetchingBlobs: false)
                    let change = try await ledger.takeOver(
                        fromCopy: former, detected: "at sync: \(server.label) holds events of this replica's origin that it never wrote (\(forked.reason))")
                    try await ledger.recordIdentityChange(change, actor: actor)
                    ledger.close()
                } catch {
                    ledger.close()
                    throw error
                }
                try ReplicaHome.record(fresh)  // a rename keeps the file: home stays home
                try Self.moveSyncFiles(from: former.path, to: fresh.path)
                try writeDurably(try JSONEncoder().encode(try ReplicaSplit.LogFiles(of: folder)), to: staging + ReplicaSplit.completeMarker)
            } catch {
                try? FileManager.default.removeItem(atPath: staging)
                throw error
            }
            try ReplicaSplit.finishInterrupted(folder)
        }
        _ = try current()  // this process's views: the new folder's
    }

    /// What the old folder remembers of its servers goes with the replica: its members'
    /// sessions (else the split costs a sign-in, and the session's secret stays behind in the
    /// folder moved aside) and what each server held at the last sync (else, until the next
    /// good sync, the status counts every change as waiting). Written 0600 in the new folder
    /// before it is put in place; the old folder's sessions go when it is moved aside.
    static func moveSyncFiles(from former: String, to fresh: String) throws {
        for name in [ReplicaSplit.sessionsFile, SyncMemory.fileName] {
            guard let contents = FileManager.default.contents(atPath: former + name) else { continue }
            try writeDurably(contents, to: fresh + name, mode: 0o600)
        }
    }

    /// Pins in `fresh` `former`'s own key for its origin: the events of that origin the new
    /// folder takes must be signed with it. (Other origins pin on first contact, as in any new
    /// replica: their current pins may be keys they rotated to after the heads a pull replays.)
    static func pinKeys(of former: DataDirectory, in fresh: DataDirectory) throws {
        guard let own = try ReplicaSigningKey.read(from: former.signingKeyPath) else {
            throw LogError.rejected(reason: "\(former.path) has no signing key to tell its own events by")
        }
        try fresh.originKeys.trust(own.publicKey, for: former.identity.origin)
    }

    /// The identity changes this replica's log records (a copy found at open or at sync, here
    /// or on another replica); `description` says what happened in words a person reads.
    public func identityChanges() throws -> [Ledger.IdentityChange] {
        try query.settings().filter { $0.key.hasPrefix("replicaCopies.") }.compactMap { setting in
            guard let object = try? JSONSerialization.jsonObject(with: Data(setting.value.utf8)) as? [String: Any],
                let former = object["formerOrigin"] as? String, let new = object["newOrigin"] as? String, let detected = object["detected"] as? String
            else { return nil }
            return Ledger.IdentityChange(
                formerOrigin: former, newOrigin: new, detected: detected, reissued: object["reissued"] as? Int ?? 0,
                notReissued: object["notReissued"] as? [String] ?? [])
        }
    }
}
