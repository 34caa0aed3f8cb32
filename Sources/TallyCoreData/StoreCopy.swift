import Foundation
import GRDB

/// A private copy of a store file, with whichever of its `-wal`, `-shm` and `-journal` lie
/// beside it, in a fresh temporary folder (removed when this is freed), opened read-only.
///
/// Why a copy: the app's files must never change, and opening them in place can change them
/// even read-only. A store in WAL mode (Core Data's default) that still has a `-wal` holds its
/// latest rows there; SQLite reads them through the `-shm` index, which even a read-only
/// connection writes to (or creates, with the `-wal`, when they are missing). Copied, the
/// store is read with everything it holds, and nothing beside the original is touched.
final class StoreCopy: Sendable {
    /// The temporary folder holding the copy.
    let folder: String
    /// The copy, open.
    let queue: DatabaseQueue

    /// Copies the store at `storePath` (each file at most `limit` bytes) and opens the copy.
    init(of storePath: String, limit: Int64) throws {
        let source = URL(fileURLWithPath: storePath).resolvingSymlinksInPath().path
        let companions = ["-wal", "-shm", "-journal"].filter { BoundedFile.regularFileSize(source + $0) != nil }
        for suffix in [""] + companions {
            guard let size = BoundedFile.regularFileSize(source + suffix) else {
                throw CoreDataStoreError(.cannotOpen, "\(storePath) is not there or is not a regular file")
            }
            guard size <= limit else {
                throw CoreDataStoreError(.tooLarge, "\(source + suffix) has \(size) bytes; stores of at most \(limit) are read")
            }
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tally-coredata-\(UUID().uuidString)").path
        let copy = folder + "/" + URL(fileURLWithPath: source).lastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            for suffix in [""] + companions {
                try FileManager.default.copyItem(atPath: source + suffix, toPath: copy + suffix)
                // Writable by us: SQLite keeps the copy's WAL index in its -shm.
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: copy + suffix)
            }
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw CoreDataStoreError(.cannotOpen, "\(storePath) could not be copied to a temporary folder for reading", cause: "\(error)")
        }
        do {
            queue = try Self.open(copy, readonly: true)
        } catch let first {
            // A WAL or rollback journal that needs recovery, or a WAL-mode store whose -wal is
            // gone, may not open read-only with every SQLite. The copy is ours, so it may be
            // opened for writing; the original is never opened at all.
            guard let writable = try? Self.open(copy, readonly: false) else {
                try? FileManager.default.removeItem(atPath: folder)
                throw CoreDataStoreError(.cannotOpen, "\(storePath) is not an SQLite database SQLite can read", cause: "\(first)")
            }
            queue = writable
        }
        self.folder = folder
    }

    deinit {
        try? queue.close()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Opens `path` and reads its schema once, so a file that is not a database fails here.
    private static func open(_ path: String, readonly: Bool) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.readonly = readonly
        configuration.label = "TallyCoreData"
        configuration.prepareDatabase { db in
            // A crafted store's schema gets no say in what runs (views, triggers and generated
            // columns may not call application functions), and damaged pages are looked for.
            try db.execute(sql: "PRAGMA trusted_schema = OFF")
            try db.execute(sql: "PRAGMA cell_size_check = ON")
        }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        do {
            _ = try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
        } catch {
            try? queue.close()
            throw error
        }
        return queue
    }
}
