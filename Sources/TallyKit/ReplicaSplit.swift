import Foundation
import TallyCore
import TallyLedger
import TallyLog
import TallySync

/// Giving a copy of a replica its own identity (`Ledger+Copies`), as TallyKit does it to a
/// folder: at open, when the folder is not where the replica was last opened; at sync, when the
/// server holds another chain of this replica's origin. docs/TALLYKIT.md, "Restored copies".
enum ReplicaSplit {
    /// The folder a split is built in beside the replica's, and the file that says it is whole.
    static func staging(_ folder: String) -> String { folder + ".split" }
    static let completeMarker = "/split-complete"

    /// At open, with the writer lock held (the app and its widget may open a restored folder
    /// at once: one of them gives it the new identity, the other finds it done): a folder that
    /// moved takes a new identity in place — it has written nothing since it was copied, so its
    /// log holds a prefix of the other copy's chain, and nothing needs writing again. Returns
    /// the change, for the caller to record in the log; nil when the folder had not moved.
    static func takeNewIdentityIfMoved(_ folder: String, lockTimeout: Double) throws -> Ledger.IdentityChange? {
        let directory = try DataDirectory(path: folder)
        if ReplicaHome.recorded(directory) != nil, try !ReplicaHome.hasMoved(directory) { return nil }
        let lock = try FileLock(path: directory.logPath + "/writer.lock", timeout: lockTimeout)
        defer { lock.release() }
        let locked = try DataDirectory(path: folder)  // as it is now that the lock is held
        guard ReplicaHome.recorded(locked) != nil else {
            try ReplicaHome.record(locked)  // a folder from before homes were recorded: here is home
            return nil
        }
        guard try ReplicaHome.hasMoved(locked) else { return nil }
        let (former, now) = try locked.takeNewIdentity()
        return Ledger.IdentityChange(
            formerOrigin: former.replicaId, newOrigin: now.identity.replicaId,
            detected: "at open: this folder is not where the replica was last opened (restored from a backup, or copied)")
    }

    /// Finishes or undoes a split that a crash interrupted: one whose new folder is complete is
    /// put in place; one that is not is removed (the replica's folder was not touched yet).
    static func finishInterrupted(_ folder: String) throws {
        let fileManager = FileManager.default
        let staging = staging(folder)
        if fileManager.fileExists(atPath: folder + completeMarker) { try fileManager.removeItem(atPath: folder + completeMarker) }
        guard fileManager.fileExists(atPath: staging) else { return }
        guard fileManager.fileExists(atPath: staging + completeMarker) else {
            try fileManager.removeItem(atPath: staging)
            return
        }
        if fileManager.fileExists(atPath: folder) { try moveAside(folder) }
        try rename(staging, to: folder)
        try fileManager.removeItem(atPath: folder + completeMarker)
    }

    /// Keeps the replaced folder beside the new one (`FOLDER.replaced-<time>`): nothing of it
    /// is lost, and an app may delete it once it has seen the replica work.
    static func moveAside(_ folder: String) throws {
        try rename(folder, to: folder + ".replaced-" + String(Int(Date().timeIntervalSince1970)))
    }

    static func rename(_ from: String, to: String) throws {
        guard Foundation.rename(from, to) == 0 else { throw LogError.io(operation: "rename", path: from, errno: errno) }
        try syncFolder((to as NSString).deletingLastPathComponent)
    }
}

extension Replica {
    /// This folder and another hold one replica's identity and both wrote under it (the server
    /// showed its chain differs): builds a new replica beside it from the server's history plus
    /// everything of this folder the server's chain lacks (`Ledger.takeOver`), records the
    /// change, and puts the new replica in this folder's place. The old folder is kept beside.
    func takeNewIdentity(syncingWith server: some ReplicaTransport, because forked: SyncRejection) async throws {
        let actor = actor
        try await writer.exclusively { folder in
            let former = try DataDirectory(path: folder)
            let staging = ReplicaSplit.staging(folder)
            if FileManager.default.fileExists(atPath: staging) { try FileManager.default.removeItem(atPath: staging) }
            let fresh = try DataDirectory.create(path: staging, name: former.identity.name)
            let ledger = try Ledger(directory: fresh)
            do {
                _ = try await ledger.sync(with: server, push: false)  // the other copy's chain, and the rest
                let change = try await ledger.takeOver(
                    fromCopy: former, detected: "at sync: \(server.label) holds events of this replica's origin that it never wrote (\(forked.reason))")
                try await ledger.recordIdentityChange(change, actor: actor)
                ledger.close()
            } catch {
                ledger.close()
                throw error
            }
            try ReplicaHome.record(fresh)  // a rename keeps the file: home stays home
            try writeDurably(Data(), to: staging + ReplicaSplit.completeMarker)
            try ReplicaSplit.finishInterrupted(folder)
        }
        _ = try current()  // this process's views: the new folder's
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
