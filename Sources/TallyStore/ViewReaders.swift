import Foundation
import GRDB
import Synchronization

/// Read-only connections to one generation of the views, for reads of one statement or of
/// statements that need no common snapshot (a GET, a write's checks): a connection is taken
/// from a list of idle ones (or opened) and put back after, under a mutex held for a pop or a
/// push.
///
/// GRDB's `DatabasePool` does the same with a semaphore and a barrier queue per read, and
/// under 64 concurrent requests its waits and wake-ups were a fifth of a list request's CPU
/// (`perf`: `_dispatch_sync_f_slow`, futex waits). Each connection here is used by one thread
/// at a time, so GRDB's own queue around it never waits.
final class ViewReaders: Sendable {
    /// The generation's database file (not the link: these stay on the generation they opened).
    let path: String
    private let idle = Mutex<[DatabaseQueue]>([])
    /// Idle connections kept; more may be open at once, and are closed when given back.
    private let kept: Int

    init(path: String, kept: Int) { (self.path, self.kept) = (path, kept) }

    /// The generation's file could not be opened: a rebuild swapped it out and removed it
    /// (connections already open keep reading it; a new one cannot).
    struct GenerationGone: Error {}

    /// Runs `body` on an idle connection, outside any transaction: each statement sees the
    /// views as they are when it runs.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try read(on: try idle.withLock { $0.popLast() } ?? open(), body)
    }

    /// Runs `body` on an idle connection if one is open (nil if none is: nothing is opened).
    func readIfIdle<T>(_ body: (Database) throws -> T) throws -> T? {
        guard let connection = idle.withLock({ $0.popLast() }) else { return nil }
        return try read(on: connection, body)
    }

    /// Runs `body` on `connection`, then keeps it idle (unless `kept` already are).
    private func read<T>(on connection: DatabaseQueue, _ body: (Database) throws -> T) throws -> T {
        defer { idle.withLock { if $0.count < kept { $0.append(connection) } } }
        return try connection.inDatabase(body)
    }

    /// Closes the idle connections (their page caches and descriptors); reads open new ones.
    func closeIdle() {
        let closing = idle.withLock { idle in
            defer { idle.removeAll() }
            return idle
        }
        for connection in closing { try? connection.close() }
    }

    private func open() throws -> DatabaseQueue {
        var configuration = ProjectionDatabase.configuration()
        configuration.readonly = true
        // A small page cache each: there may be dozens of these, and SQLite reads what is
        // not cached from the operating system's cache.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = -2048") }
        do {
            return try DatabaseQueue(path: path, configuration: configuration)
        } catch is DatabaseError where !FileManager.default.fileExists(atPath: path) {
            // Cannot open (14), or an I/O error (10) racing the removal of its -wal and -shm.
            throw GenerationGone()
        }
    }
}
