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

    /// The generation the link points at, or nil if there is none yet.
    static func currentGeneration(_ directory: DataDirectory) -> Int? {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: linkPath(directory)) else { return nil }
        return Int(target.dropFirst("projections-".count).prefix(6))
    }

    /// The resolved path of the current generation.
    public static func currentPath(_ directory: DataDirectory) -> String? {
        currentGeneration(directory).map { directory.path + "/" + generationName($0) }
    }

    /// Opens the current views, creating generation 1 (empty, migrated) if there is none.
    public static func open(_ directory: DataDirectory) throws -> DatabasePool {
        if currentGeneration(directory) == nil {
            let path = directory.path + "/" + generationName(1)
            try? FileManager.default.removeItem(atPath: path)
            try migrate(try DatabaseQueue(path: path, configuration: configuration()))
            try pointLink(of: directory, at: 1)
        }
        let pool = try DatabasePool(path: linkPath(directory), configuration: configuration())
        try migrate(pool)
        return pool
    }

    /// Connection settings: WAL (set by DatabasePool), a 64 MiB page cache, foreign keys off
    /// (references may point at entities not received yet).
    static func configuration() -> Configuration {
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

    /// Runs `body`, which fills empty view tables, with their secondary indexes dropped, then
    /// creates them again from the SQL the schema recorded. Building an index once from all
    /// rows costs about half of keeping it in step row by row. Inside the caller's transaction,
    /// so no reader ever sees the tables without their indexes.
    static func buildingIndexesAfter(_ db: Database, tables: [String], _ body: () throws -> Void) throws {
        let marks = Array(repeating: "?", count: tables.count).joined(separator: ", ")
        let indexes = try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (\(marks))",
                                       arguments: StatementArguments(tables))
        for index in indexes { try db.execute(sql: "DROP INDEX \(index["name"] as String)") }
        try body()
        for index in indexes { try db.execute(sql: index["sql"] as String) }
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
