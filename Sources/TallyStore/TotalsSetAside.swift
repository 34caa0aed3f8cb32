import GRDB

/// The running totals that triggers keep in step with the rows, one upsert per row written
/// (`month_totals` from `expenses`, `account_days` from `expenses` and `transfers`), set aside
/// while those tables are filled from empty — a first load, a new generation: the triggers
/// dropped before the rows, made again after them, and the totals summed once from all the rows,
/// as the migrations that made them did. The upserts were two fifths of writing a 100,000-row
/// import's views (`tally-bench import`: the rows 0.54 s with them, 0.21–0.38 s without, and the
/// sums 0.04 s). Inside the caller's transaction, so no reader sees the totals missing.
struct TotalsSetAside {
    /// The `CREATE TRIGGER` statements of the triggers dropped.
    private let triggers: [String]

    /// The triggers `sums` stands in for; any other trigger stays in place during a fill.
    static let names = [
        "month_totals_insert", "month_totals_delete", "month_totals_update", "account_days_expense_insert", "account_days_expense_delete",
        "account_days_expense_update", "account_days_transfer_insert", "account_days_transfer_delete", "account_days_transfer_update",
    ]

    /// Drops the triggers that keep the totals.
    static func forFilling(_ db: Database) throws -> TotalsSetAside {
        let marks = Array(repeating: "?", count: names.count).joined(separator: ", ")
        let triggers = try Row.fetchAll(
            db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN (\(marks)) ORDER BY name", arguments: StatementArguments(names))
        for trigger in triggers { try db.execute(sql: "DROP TRIGGER \((trigger["name"] as String).quotedDatabaseIdentifier)") }
        return TotalsSetAside(triggers: triggers.map { $0["sql"] })
    }

    /// Makes the triggers again and the totals anew from every row (whatever the tables held).
    func restore(_ db: Database) throws {
        for sql in triggers { try db.execute(sql: sql) }
        try db.execute(sql: Self.sums)
    }

    /// The totals of the rows, summed as the triggers add them up (0009 and 0010's migrations).
    static let sums = """
        DELETE FROM month_totals;
        INSERT INTO month_totals (month, category_id, kind, currency, high, low, n)
        SELECT month, COALESCE(category_id, ''), kind, currency, SUM(amount / 1000000000), SUM(amount % 1000000000), count(*)
        FROM expenses GROUP BY month, COALESCE(category_id, ''), kind, currency;
        DELETE FROM account_days;
        INSERT INTO account_days (account_id, day, currency, high, low, n)
        SELECT account_id, (date_ms - ((date_ms % 86400000) + 86400000) % 86400000) / 86400000 AS d, currency,
               SUM(CASE kind WHEN 'income' THEN 1 ELSE -1 END * (amount / 1000000000)),
               SUM(CASE kind WHEN 'income' THEN 1 ELSE -1 END * (amount % 1000000000)), count(*)
        FROM expenses WHERE account_id IS NOT NULL GROUP BY account_id, d, currency;
        INSERT INTO account_days (account_id, day, currency, high, low, n)
        SELECT account_id, d, '', SUM(-(amount / 1000000000)), SUM(-(amount % 1000000000)), count(*)
        FROM (SELECT account_id, (date_ms - ((date_ms % 86400000) + 86400000) % 86400000) / 86400000 AS d, amount FROM transfers)
        WHERE true GROUP BY account_id, d
        ON CONFLICT (account_id, day, currency) DO UPDATE SET high = high + excluded.high, low = low + excluded.low, n = n + excluded.n;
        INSERT INTO account_days (account_id, day, currency, high, low, n)
        SELECT to_account_id, d, '', SUM(arriving / 1000000000), SUM(arriving % 1000000000), count(*)
        FROM (SELECT to_account_id, (date_ms - ((date_ms % 86400000) + 86400000) % 86400000) / 86400000 AS d,
                     COALESCE(to_amount, amount) AS arriving FROM transfers)
        WHERE true GROUP BY to_account_id, d
        ON CONFLICT (account_id, day, currency) DO UPDATE SET high = high + excluded.high, low = low + excluded.low, n = n + excluded.n;
        """
}
