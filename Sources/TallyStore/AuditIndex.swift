import Foundation
import GRDB
import TallyCore
import TallyLog

/// Which segments hold events of which entity (`DATA_DIR/audit-index.sqlite`), so an audit
/// trail reads those segments only instead of the whole log per request.
///
/// Kept apart from the views (it holds log positions, which differ between replicas, and the
/// views are compared across replicas). Filled lazily: each audit first indexes the events
/// appended since the last one (reading forward from there, once), so its cost is what it reads,
/// not the log's length. It is a cache of the log: `tally log repair` deletes it, and a
/// missing or unreadable index is rebuilt from the log.
public struct AuditIndex: Sendable {
    let path: String
    let reader: LogReader

    /// The index of `directory`'s log.
    public init(_ directory: DataDirectory) {
        path = directory.path + "/audit-index.sqlite"
        reader = directory.reader
    }

    /// Deletes the index (after the log was cut: its positions no longer hold).
    public static func remove(from directory: DataDirectory) {
        let path = directory.path + "/audit-index.sqlite"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Every event of entity `id`, in log order.
    public func events(of id: EntityID) throws -> [LoggedEvent] {
        try events(of: [id])[id] ?? []
    }

    /// Every event of each entity of `ids`, in log order, each segment that holds any of them
    /// read once (the card schedules of a summary by bill asked for each card apart, and 1,000
    /// cards in one segment read it 1,000 times: minutes of a request, found by review).
    public func events(of ids: Set<EntityID>) throws -> [EntityID: [LoggedEvent]] {
        guard !ids.isEmpty else { return [:] }
        let queue = try open()
        let segments = try queue.write { db -> Set<Int64> in
            try catchUp(db)
            var segments: Set<Int64> = []
            let statement = try db.cachedStatement(sql: "SELECT segment FROM entity_segments WHERE entity = ?")
            for id in ids { segments.formUnion(try Int64.fetchAll(statement, arguments: [id.description])) }
            return segments
        }
        var events: [EntityID: [LoggedEvent]] = [:]
        for first in segments.sorted() {
            let name = SegmentFormat.fileName(firstIndex: UInt64(first))
            try reader.forEachEvent(from: UInt64(first)) { logged in
                guard logged.segment == name else { return false }
                if ids.contains(logged.event.entityID) { events[logged.event.entityID, default: []].append(logged) }
                return true
            }
        }
        return events
    }

    private func open() throws -> DatabaseQueue {
        _ = SQLiteLibrary.configured  // before the process's first connection
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS entity_segments (entity TEXT NOT NULL, segment INTEGER NOT NULL, PRIMARY KEY (entity, segment)) WITHOUT ROWID;
                    CREATE TABLE IF NOT EXISTS indexed (id INTEGER PRIMARY KEY CHECK (id = 1), through INTEGER NOT NULL);
                    INSERT OR IGNORE INTO indexed (id, through) VALUES (1, 0);
                    """)
        }
        return queue
    }

    /// Indexes the events after the last indexed one.
    private func catchUp(_ db: Database) throws {
        let through = UInt64(try Int64.fetchOne(db, sql: "SELECT through FROM indexed WHERE id = 1") ?? 0)
        let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO entity_segments (entity, segment) VALUES (?, ?)")
        var last = through
        var seen: Set<String> = []  // entities already noted for the current segment
        var currentSegment = ""
        try reader.forEachEvent(from: through + 1) { logged in
            if logged.segment != currentSegment { (currentSegment, seen) = (logged.segment, []) }
            let entity = logged.event.entityID.description
            if seen.insert(entity).inserted {
                try insert.execute(arguments: [entity, Int64(SegmentFormat.firstIndex(fromFileName: logged.segment) ?? 0)])
            }
            last = logged.index
            return true
        }
        try db.execute(sql: "UPDATE indexed SET through = ? WHERE id = 1", arguments: [Int64(last)])
    }
}
