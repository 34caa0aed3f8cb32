-- Accounts and transfers (issue 34), event schema version 6. Old events name no account, so
-- the expenses' new column starts NULL everywhere and no view needs re-projecting.
--
-- A balance on a day sums, per account, the expenses that name it and the transfers out of
-- and into it up to that instant: each index below covers its sum alone (account, time, then
-- what is summed), so a balance reads no table row.
ALTER TABLE expenses ADD COLUMN account_id TEXT;
CREATE INDEX expenses_by_account ON expenses (account_id, date_ms, kind, currency, amount) WHERE account_id IS NOT NULL;

CREATE TABLE accounts (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    kind             TEXT NOT NULL,
    currency         TEXT NOT NULL,
    opening_balance  INTEGER NOT NULL,
    opening_date     TEXT NOT NULL,
    is_archived      INTEGER NOT NULL,
    opening_ms       INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE transfers (
    id             TEXT PRIMARY KEY,
    account_id     TEXT NOT NULL,
    to_account_id  TEXT NOT NULL,
    amount         INTEGER NOT NULL,
    to_amount      INTEGER,
    date           TEXT NOT NULL,
    memo           TEXT,
    date_ms        INTEGER NOT NULL,
    month          TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX transfers_out ON transfers (account_id, date_ms, amount);
CREATE INDEX transfers_in ON transfers (to_account_id, date_ms, to_amount, amount);
