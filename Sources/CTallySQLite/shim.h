#include <sqlite3.h>

// `sqlite3_db_config` is variadic, which Swift cannot call: one fixed-argument wrapper per
// option Tally sets.

// Whether closing `db` (when it is the last connection to its database) leaves the WAL as it
// is instead of checkpointing it (`SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`). Returns an SQLite code.
static inline int tally_sqlite_skip_checkpoint_on_close(sqlite3 *db, int skip) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, skip, (int *)0);
}
