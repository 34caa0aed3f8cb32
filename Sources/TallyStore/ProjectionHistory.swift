import Foundation
import GRDB

/// The views' checkpoint, and when they reached it: every projection transaction moves
/// `projection_checkpoint` and records, in `projection_history`, the index reached by the end
/// of the current second. That is how a moment becomes a log index for as-of reads: "as of
/// 2026-03-31T23:59" is what these views showed at the end of that second on this replica.
enum ProjectionHistory {
    /// The clock the history is written by, in Unix seconds.
    static func currentSecond() -> Int64 { Int64(Date().timeIntervalSince1970.rounded(.down)) }

    /// Sets the checkpoint to `lastIndex` and records that the views reached it now (in the
    /// caller's transaction, so both move together). A clock set back records under the
    /// latest second already written, so the history never goes backwards.
    static func advance(to lastIndex: UInt64, _ db: Database) throws {
        try db.cachedStatement(sql: "UPDATE projection_checkpoint SET last_index = ? WHERE id = 1").execute(arguments: [Int64(lastIndex)])
        try db.cachedStatement(
            sql: """
                INSERT INTO projection_history (second, last_index)
                VALUES (max(?1, coalesce((SELECT max(second) FROM projection_history), ?1)), ?2)
                ON CONFLICT (second) DO UPDATE SET last_index = excluded.last_index
                """
        ).execute(arguments: [currentSecond(), Int64(lastIndex)])
    }

    /// The log index these views showed at the end of `second` (Unix seconds): 0 before they
    /// first projected anything.
    static func index(atEndOf second: Int64, _ db: Database) throws -> UInt64 {
        let index = try Int64.fetchOne(
            db, sql: "SELECT last_index FROM projection_history WHERE second <= ? ORDER BY second DESC LIMIT 1",
            arguments: [second])
        return UInt64(max(0, index ?? 0))
    }

    /// Gives `next` (a generation written anew: a rebuild, a bulk's new views) the history of
    /// the generation at `replaced` for every second before `second` (when the new one began;
    /// what `next` recorded itself from then on stays), leaving out indexes past `lastIndex` (a
    /// log cut by `tally log repair` no longer holds them). Rows `next` brought from elsewhere
    /// before that second (a snapshot it started from) give way to the replaced generation's.
    static func carryOver(from replaced: String, into next: some DatabaseWriter, before second: Int64, upTo lastIndex: UInt64) throws {
        try next.writeWithoutTransaction { db in
            try db.execute(sql: "ATTACH DATABASE ? AS replaced", arguments: [replaced])
            try db.inTransaction {
                try db.execute(sql: "DELETE FROM main.projection_history WHERE second < ?", arguments: [second])
                try db.execute(
                    sql: """
                        INSERT INTO main.projection_history (second, last_index)
                        SELECT second, last_index FROM replaced.projection_history WHERE second < ? AND last_index <= ?
                        """, arguments: [second, Int64(lastIndex)])
                return .commit
            }
            try db.execute(sql: "DETACH DATABASE replaced")
        }
    }
}
