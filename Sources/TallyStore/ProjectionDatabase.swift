import Foundation
import GRDB
import TallyLog
import TallyMigrations

/// Where a replica's views live and how they are opened.
///
/// `DATA_DIR/projections.sqlite` is a symbolic link to the current generation,
/// `projections-NNNNNN.sqlite`. A rebuild writes the next generation beside it and swaps the
/// link with one atomic rename: renaming over a live WAL-mode database is not safe (its -wal
/// file would be paired with the wrong main file), but swapping a link is, and SQLite keeps
/// each generation's -wal beside the file the link resolves to. Connections opened before
/// a swap keep reading the old generation until they reopen.
public enum ProjectionDatabase {
    /// The link every opener goes through.
    public static func linkPath(_ directory: DataDirectory) -> String { directory.path + "/projections.sqlite" }

    /// The file name of generation `number`.
    static func generationName(_ number: Int) -> String { String(format: "projections-%06d.sqlite", number) }

    /// The generation the link points at, or nil if there is none yet: one `readlink`, which
    /// `CurrentViews.followingLink` does at each catch-up, apply and checkpoint read (not per read).
    static func currentGeneration(_ directory: DataDirectory) -> Int? {
        var target = [CChar](repeating: 0, count: 64)
        let length = readlink(linkPath(directory), &target, target.count)
        guard length > 0 else { return nil }
        let name = String(decoding: target[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Int(name.dropFirst("projections-".count).prefix(6))
    }

    /// The resolved path of the current generation.
    public static func currentPath(_ directory: DataDirectory) -> String? {
        currentGeneration(directory).map { directory.path + "/" + generationName($0) }
    }

    /// Opens the current views, creating generation 1 (empty, migrated) if there is none —
    /// written whole before the link points at it (`writeNextGeneration`: one fsync, where
    /// migrating in place took a journal and three syncs per migration, ~50 ms a new ledger).
    public static func open(_ directory: DataDirectory, poolReaders: Int = ViewConnections().poolReaders) throws -> DatabasePool {
        if currentGeneration(directory) == nil {
            let first = try writeNextGeneration(directory) { _, _ in }
            try pointLink(of: directory, at: first.number)
        }
        var pooled = configuration()
        pooled.maximumReaderCount = poolReaders
        let pool = try openCurrentGeneration(directory, pooled)
        try migrate(pool)
        return pool
    }

    /// Opens the generation the link points at by its own path rather than through the link:
    /// GRDB writes to a database at every open unless it finds a non-empty WAL at the path it
    /// was given plus `-wal`, and SQLite keeps the WAL beside the file the link resolves to (a
    /// hosted ledger paid that write, with a sync of the WAL and of the folder, at every
    /// reopen). A rebuild may move the link meanwhile: then the pool is closed, what the open
    /// may have made of the generation left behind is removed (a rebuild removes it anyway),
    /// and the open is tried again; after three moves, through the link.
    private static func openCurrentGeneration(_ directory: DataDirectory, _ configuration: Configuration) throws -> DatabasePool {
        for _ in 0..<3 {
            guard let generation = currentGeneration(directory) else { break }
            let path = directory.path + "/" + generationName(generation)
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let pool = try DatabasePool(path: path, configuration: configuration)
            if currentGeneration(directory) == generation { return pool }
            try? pool.close()
            remove(directory, generation: generation)
        }
        return try DatabasePool(path: linkPath(directory), configuration: configuration)
    }

    /// Connection settings: WAL (set by DatabasePool), a 64 MiB page cache, foreign keys off
    /// (references may point at entities not received yet); SQLite's process-wide settings
    /// (`SQLiteLibrary`) are made first.
    static func configuration() -> Configuration {
        _ = SQLiteLibrary.configured  // before the process's first connection
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA cache_size = -65536")
            // The log is what is durable; the views only need to be consistent. In WAL mode,
            // NORMAL keeps every commit atomic (the checkpoint moves with its rows) and may lose
            // the last commits in a power cut — which catch-up then re-applies from the log.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        return configuration
    }

    /// Drops the secondary indexes of `tables` (about to be filled from empty) and returns the
    /// SQL the schema recorded for them, for `createIndexes` once the rows are in: building an
    /// index once from all rows costs about half of keeping it in step row by row. Both inside
    /// the caller's transaction, so no reader ever sees the tables without their indexes.
    static func dropIndexes(of tables: [String], _ db: Database) throws -> [String] {
        let marks = Array(repeating: "?", count: tables.count).joined(separator: ", ")
        let indexes = try Row.fetchAll(
            db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (\(marks))",
            arguments: StatementArguments(tables))
        for index in indexes { try db.execute(sql: "DROP INDEX \(index["name"] as String)") }
        return indexes.map { $0["sql"] as String }
    }

    /// Creates the indexes `dropIndexes` dropped.
    ///
    /// SQLite sorts an index's entries in memory up to the page cache's size, in one list; with
    /// the cache made small for the build it sorts runs of about 2 MiB (one at a time on a
    /// helper thread, `PRAGMA threads`) and merges them, which measured a quarter faster
    /// for 200,000 expenses (sorting runs that fit the CPU's caches). The cache is set back after.
    static func createIndexes(_ definitions: [String], _ db: Database) throws {
        let cacheSize = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -65536
        try db.execute(sql: "PRAGMA cache_size = -2000; PRAGMA threads = 1")
        defer { try? db.execute(sql: "PRAGMA cache_size = \(cacheSize); PRAGMA threads = 0") }
        for definition in definitions { try db.execute(sql: definition) }
    }

    /// Takes the lock that one writer of a new generation (a rebuild, a large first load) holds
    /// from choosing its number until the link points at it: two such writers would otherwise
    /// pick the same file. Nil if another process holds it.
    static func lockGenerations(_ directory: DataDirectory) throws -> FileLock? {
        try FileLock.takeIfFree(path: directory.path + "/projections.lock")
    }

    /// `lockGenerations`, waiting up to `timeout` seconds for another holder to finish.
    static func lockGenerations(_ directory: DataDirectory, waiting timeout: Double) throws -> FileLock {
        let start = Date()
        while true {
            if let lock = try lockGenerations(directory) { return lock }
            guard Date().timeIntervalSince(start) < timeout else {
                throw LogError.rejected(
                    reason: "another process is writing a new generation of the views of \(directory.path) "
                        + "(a rebuild or a first load; waited \(Int(timeout)) s); retry when it has finished")
            }
            usleep(50_000)
        }
    }

    /// Writes the generation after the current one, from nothing: migrated, then filled by
    /// `fill` (which runs its own transactions); the caller holds `lockGenerations`. No file
    /// points at it yet, so it is written without a journal or syncs (a crash leaves a stray
    /// file, which the next writer of that number removes first): every page is written once,
    /// instead of to the WAL and then again by a checkpoint. Then WAL mode, as every generation
    /// is opened, and an fsync so that it is durable before `makeCurrent` points anything at
    /// it; the disk starts on the pages while the rest is being written (`EarlyWriteback`), so
    /// that fsync waits for the last part only. Returns its number and path.
    static func writeNextGeneration(_ directory: DataDirectory, _ fill: (DatabaseQueue, _ path: String) throws -> Void) throws -> (number: Int, path: String) {
        let number = (currentGeneration(directory) ?? 0) + 1
        let path = directory.path + "/" + generationName(number)
        removeFiles(at: path)
        let queue = try DatabaseQueue(path: path, configuration: configuration())
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF") }
        try migrate(queue)
        do {
            let writeback = EarlyWriteback(path: path)
            defer { writeback.stop() }
            try fill(queue, path)
        }
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
        try queue.close()
        let fd = Glibc.open(path, O_RDONLY)
        guard fd >= 0, fsync(fd) == 0 else {
            let failure = errno
            if fd >= 0 { close(fd) }
            throw LogError.io(operation: "fsync", path: path, errno: failure)
        }
        close(fd)
        return (number, path)
    }

    /// Removes a database file and its -wal and -shm companions, if there.
    static func removeFiles(at path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Points the link at generation `number` and removes the one it pointed at before.
    /// Processes still using that one keep their open files until `CurrentViews` moves them on.
    static func makeCurrent(_ directory: DataDirectory, _ number: Int) throws {
        let old = currentGeneration(directory)
        try pointLink(of: directory, at: number)
        if let old, old != number { remove(directory, generation: old) }
    }

    /// Removes generation `number`'s files (a rebuild that only verified).
    static func remove(_ directory: DataDirectory, generation number: Int) {
        removeFiles(at: directory.path + "/" + generationName(number))
    }

    /// Applies the numbered migrations of `Migrations/` that are not applied yet.
    static func migrate(_ writer: some DatabaseWriter) throws {
        var migrator = DatabaseMigrator()
        for migration in TallyMigrations.all {
            migrator.registerMigration(migration.identifier) { db in try db.execute(sql: migration.sql) }
        }
        try migrator.migrate(writer)
    }

    /// Atomically points `projections.sqlite` at generation `number` (link beside, rename, fsync dir).
    static func pointLink(of directory: DataDirectory, at number: Int) throws {
        let temporary = linkPath(directory) + ".next"
        try? FileManager.default.removeItem(atPath: temporary)
        try FileManager.default.createSymbolicLink(atPath: temporary, withDestinationPath: generationName(number))
        guard rename(temporary, linkPath(directory)) == 0 else {
            throw LogError.io(operation: "rename", path: temporary, errno: errno)
        }
        let fd = Glibc.open(directory.path, O_RDONLY | O_DIRECTORY)
        if fd >= 0 { fsync(fd); close(fd) }
    }
}

extension ProjectionDatabase {
    /// The attachments live entities reference, as the views stand, read without changing them.
    public static func peekReferencedAttachments(_ directory: DataDirectory) -> Set<String> {
        currentPath(directory).flatMap { path in
            try? DatabaseQueue(
                path: path,
                configuration: {
                    var c = Configuration(); c.readonly = true; return c
                }()
            ).read {
                try ProjectionQueries.referencedAttachments($0)
            }
        } ?? []
    }

    /// The log index the current views reflect, read without migrating, catching up or
    /// writing anything (`tally status` must change nothing); 0 if there are no views yet.
    public static func peekCheckpoint(_ directory: DataDirectory) -> UInt64 {
        currentPath(directory).flatMap { path in
            try? DatabaseQueue(
                path: path,
                configuration: {
                    var c = Configuration(); c.readonly = true; return c
                }()
            ).read {
                try UInt64.fetchOne($0, sql: "SELECT last_index FROM projection_checkpoint")
            }
        } ?? 0
    }
}
