import CTallySQLite

/// What Tally sets for the SQLite library as a whole, once per process, before its first
/// connection opens (`ProjectionDatabase.configuration()`, which every connection to the views
/// is opened with, and the audit index see to it first).
///
/// SQLite's count of the memory it holds is turned off: with it on, each of SQLite's
/// allocations takes one mutex shared by every thread of the process. A server opening and
/// closing many hosted ledgers at once parses a schema per connection it opens — thousands of
/// allocations each — and its threads spent more time queued on that mutex than working
/// (BENCHMARKS.md, hosting: ~440 `futex` calls per create, against ~11 with every ledger open).
public enum SQLiteLibrary {
    /// Made once, before the first connection: false if SQLite was already initialised (by a
    /// connection opened some other way), when the setting can no longer change.
    public static let configured: Bool = tally_sqlite_stop_counting_memory() == SQLITE_OK

    /// The bytes SQLite counts as held now: 0 while it does not count them.
    public static var countedBytes: Int64 { sqlite3_memory_used() }
}
