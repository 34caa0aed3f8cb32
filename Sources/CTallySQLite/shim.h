#include <sqlite3.h>

// `sqlite3_db_config` and `sqlite3_config` are variadic, which Swift cannot call: one
// fixed-argument wrapper per option Tally sets. SwiftPM does not rebuild the Swift files that
// call these when this header changes: touch them after editing it.

// Whether closing `db` (when it is the last connection to its database) leaves the WAL as it
// is instead of checkpointing it (`SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`). Returns an SQLite code.
static inline int tally_sqlite_skip_checkpoint_on_close(sqlite3 *db, int skip) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, skip, (int *)0);
}

// Stops SQLite counting the memory it holds (`SQLITE_CONFIG_MEMSTATUS`, on in Debian's build).
// While it counts, every allocation SQLite makes takes one mutex shared by the whole process,
// and threads opening connections at once (each parses the schema: thousands of allocations)
// queue on it. Only takes effect before SQLite initialises, at the process's first
// connection; returns SQLITE_OK, or SQLITE_MISUSE when it is too late.
static inline int tally_sqlite_stop_counting_memory(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
