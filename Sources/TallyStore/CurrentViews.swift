import CTallySQLite
import Foundation
import GRDB
import Synchronization
import TallyLog

/// The views a projector reads and writes: the generation `projections.sqlite` points at,
/// reopened when a rebuild or a large first load (by this process or another) has moved the
/// link to a new one and the projector next catches up, applies or reads its checkpoint. Without this, a long-running process (the server) would keep reading and
/// projecting into a generation that is no longer on disk.
final class CurrentViews: Sendable {
    private struct Opened {
        var generation: Int?
        var pool: DatabasePool
        /// Connections of their own to the same generation (nil for fixed views).
        var readers: ViewReaders?

        init(generation: Int?, pool: DatabasePool, directory: DataDirectory?, connections: ViewConnections) {
            (self.generation, self.pool) = (generation, pool)
            if let directory, let generation {
                readers = ViewReaders(path: directory.path + "/" + ProjectionDatabase.generationName(generation), kept: connections.idleDirectReaders)
            }
        }
    }

    /// Nil for views fixed to one database (a rebuild's next generation).
    private let directory: DataDirectory?
    private let opened: Mutex<Opened>
    /// How many connections it keeps.
    private let connections: ViewConnections

    /// Follows `directory`'s link, creating generation 1 if there is none.
    init(directory: DataDirectory, connections: ViewConnections) throws {
        let generation = ProjectionDatabase.currentGeneration(directory)  // read first: if the link moves meanwhile, the next use reopens
        let pool = try ProjectionDatabase.open(directory, poolReaders: connections.poolReaders)
        self.directory = directory
        self.connections = connections
        opened = Mutex(
            Opened(generation: generation ?? ProjectionDatabase.currentGeneration(directory), pool: pool, directory: directory, connections: connections))
    }

    /// Always `pool`.
    init(fixed pool: DatabasePool) {
        directory = nil
        connections = ViewConnections()
        opened = Mutex(Opened(generation: nil, pool: pool, directory: nil, connections: connections))
    }

    /// The pool in use, without looking at the link: for reads, which are consistent in any
    /// generation (each holds rows and checkpoint together). A swap is noticed by the next
    /// `followingLink` — every catch-up, apply and checkpoint read goes through it. Checking the
    /// link on every read cost a quarter of `GET /v1/expenses/{id}`'s throughput here (a
    /// syscall per request).
    var pool: DatabasePool { opened.withLock { $0.pool } }

    /// Runs `body` on the generation in use, outside any transaction, on a connection of its
    /// own (`ViewReaders`) rather than through the pool's readers — or, for a write's own reads
    /// in views that keep few connections, on the writer (`readingForAWrite`). If the read needs a new
    /// connection and that generation's file is gone (a rebuild swapped it out), the link is
    /// followed first — a server that only reads would otherwise never move on; if the new
    /// generation cannot be opened either, the pool's readers answer (they open through the link).
    func readDirectly<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try readInUse(body)
        } catch is ViewReaders.GenerationGone {
            _ = followingLink()
            do { return try readInUse(body) } catch is ViewReaders.GenerationGone { return try pool.unsafeRead(body) }
        }
    }

    private func readInUse<T>(_ body: (Database) throws -> T) throws -> T {
        let (pool, readers) = opened.withLock { ($0.pool, $0.readers) }
        guard let readers else { return try pool.unsafeRead(body) }
        if connections.writeReadsOnWriter, Self.readingForAWrite {
            if let result = try readers.readIfIdle(body) { return result }
            // On the writer, outside a transaction (as on a reader, each statement sees what is
            // committed), unless a catch-up holds it or another of these reads is under way: a
            // reader is then opened, and kept while idle for the next.
            if writerInUse.try() {
                defer { writerInUse.unlock() }
                return try pool.writeWithoutTransaction(body)
            }
        }
        return try readers.read(body)
    }

    /// Set while a write reads what it needs: its checks, the entity it answers with, the
    /// recurrence pass's rules (`Views.readingForAWrite`). Views that keep few connections
    /// (`ViewConnections.writeReadsOnWriter`) read those on the writer when no reader is idle.
    /// Only reads are made in its scope: a write to the views there would queue on the writer
    /// it may already be on (GRDB traps).
    @TaskLocal static var readingForAWrite = false

    /// Held while the writer projects for long (a catch-up's many commits, a first load in
    /// place), and by a write's read on it: such a read never waits on the writer's queue behind
    /// them, holding one of the few threads Swift's concurrency runs requests on (a delivery of a
    /// million events projects for seconds). A group commit's apply does not take it: a read
    /// waits behind one (short), rather than open a reader whenever one is under way — with
    /// it, every busy ledger kept readers open again (the hosting bench's server of warm ledgers
    /// held a quarter more descriptors than the one of 10,000). Left: an apply whose
    /// `BEGIN IMMEDIATE` waits for another process holding SQLite's write lock on these views
    /// (an operator's command on a served ledger's folder, up to the 30 s busy timeout) holds
    /// such a read as long.
    private let writerInUse = NSLock()

    /// Runs `body`, which projects on the writer (not re-entered: the lock is not recursive).
    func writing<T>(_ body: () throws -> T) rethrows -> T {
        writerInUse.lock()
        defer { writerInUse.unlock() }
        return try body()
    }

    /// Gives back what idle connections hold: the pool's readers are closed and its writer's
    /// cache emptied (GRDB's `releaseMemory`), and so are the direct readers. The next read or
    /// write opens what it needs again.
    func releaseMemory() {
        let (pool, readers) = opened.withLock { ($0.pool, $0.readers) }
        pool.releaseMemory()
        readers?.closeIdle()
    }

    /// A WAL at most this long is left as it is when the views close, to be read back by the
    /// next open; a longer one is checkpointed
    /// into the database and emptied.
    static let walLeftAtClose = 256 << 10

    /// Closes every connection, the read-only ones first, so that the writer closes last and
    /// decides what becomes of the WAL (a read-only connection closing last leaves it whole,
    /// and GRDB closes a pool's writer before its readers):
    ///
    /// - a WAL of at most `walLeftAtClose` bytes is left as it is: checkpointing it would cost
    ///   two `fsync`s at every close of a hosted ledger, and the next open reads it back in a
    ///   fraction of that;
    /// - a longer one is checkpointed and cut to nothing, so that no open ever reads back
    ///   megabytes (a hosted ledger's reopen read up to 4 MiB, ~2,000 `pread`s, before this).
    ///
    /// Either way the WAL file and its index (`-shm`) are kept (`SQLITE_FCNTL_PERSIST_WAL`),
    /// so that the next open creates no file. Reads and writes after this fail.
    func close() {
        let (pool, readers, generation) = opened.withLock { ($0.pool, $0.readers, $0.generation) }
        readers?.closeIdle()
        pool.releaseMemory()  // closes the pool's readers
        var walBytes = Int.max
        if let directory, let generation {
            var info = stat()
            if stat(directory.path + "/" + ProjectionDatabase.generationName(generation) + "-wal", &info) == 0 { walBytes = Int(info.st_size) }
        }
        try? pool.writeWithoutTransaction { db in
            var persist: Int32 = 1
            _ = sqlite3_file_control(db.sqliteConnection, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
            if walBytes <= Self.walLeftAtClose {
                _ = tally_sqlite_skip_checkpoint_on_close(db.sqliteConnection, 1)
            } else {
                try db.execute(sql: "PRAGMA journal_size_limit = 0")  // with PERSIST_WAL: cut to nothing after the checkpoint
            }
        }
        try? pool.close()
    }

    /// The current generation's pool. If the link moved since it was last looked at, the new
    /// one is opened (and the old pool is closed once its last user lets go of it); if that
    /// fails, the old one is kept — its rows are still consistent with its checkpoint.
    ///
    /// A new generation behind the one in use (a rebuild in another process swapped it in
    /// before it took the writes this process projected meanwhile) is caught up from the log
    /// before it replaces it: else a write acknowledged a moment ago would read back as missing
    /// until the next catch-up.
    func followingLink() -> DatabasePool {
        guard let directory else { return pool }
        let generation = ProjectionDatabase.currentGeneration(directory)
        let (inUse, known) = opened.withLock { ($0.pool, $0.generation) }
        guard generation != known, let next = try? ProjectionDatabase.open(directory, poolReaders: connections.poolReaders) else { return inUse }
        for _ in 0..<5 {  // bounded: a writer in this process may keep moving the views in use ahead
            // Read on each pool's writer, which is always open: the generation in use may be
            // gone from the folder, and a reader opened for it now could not open its file.
            let nextIndex = (try? next.writeWithoutTransaction(Projector.checkpoint)) ?? 0
            let inUseIndex = (try? inUse.writeWithoutTransaction(Projector.checkpoint)) ?? 0
            if nextIndex >= inUseIndex { break }
            _ = try? Projector(directory: directory, database: next).catchUp()
        }
        return opened.withLock { opened in
            if opened.generation == known { opened = Opened(generation: generation, pool: next, directory: directory, connections: connections) }
            return opened.pool
        }
    }
}
