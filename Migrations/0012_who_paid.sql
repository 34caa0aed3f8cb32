-- Who paid and who owes (issue 34): an expense's payer, how it is shared and among whom
-- (new columns, NULL for every older expense), and settlements between people.
ALTER TABLE expenses ADD COLUMN paid_by TEXT;
ALTER TABLE expenses ADD COLUMN split TEXT;
ALTER TABLE expenses ADD COLUMN shares TEXT;
CREATE INDEX expenses_paid_by ON expenses (paid_by) WHERE paid_by IS NOT NULL;

CREATE TABLE settlements (
    id        TEXT PRIMARY KEY,
    paid_by   TEXT NOT NULL,
    paid_to   TEXT NOT NULL,
    amount    INTEGER NOT NULL,
    currency  TEXT NOT NULL,
    date      TEXT NOT NULL,
    memo      TEXT,
    date_ms   INTEGER NOT NULL,
    month     TEXT NOT NULL
) WITHOUT ROWID;

-- The latest transfers, newest first, read off an index (issue 34's review).
CREATE INDEX transfers_by_date ON transfers (date_ms, id);
