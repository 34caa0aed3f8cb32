-- Tally projections, schema 1. Every table here is a view of the log: disposable, rebuilt by
-- `tally rebuild-projections`. Append-only: later changes go in 0002_….sql.

-- The log position the views reflect; updated in the same transaction as the views.
CREATE TABLE projection_checkpoint (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    last_index  INTEGER NOT NULL
);
INSERT INTO projection_checkpoint (id, last_index) VALUES (1, 0);

-- Every entity ever mentioned, with each property's value and the stamp that set it, the
-- create and delete stamps (encoding: TallyStore/EntityStateCodec.swift). The merge decides
-- from this row alone, never from a scan of the log.
CREATE TABLE entity_state (
    id     TEXT PRIMARY KEY,
    type   INTEGER NOT NULL,
    state  BLOB NOT NULL
) WITHOUT ROWID;

CREATE TABLE expenses (
    id           TEXT PRIMARY KEY,
    kind         TEXT NOT NULL,
    amount       INTEGER NOT NULL,
    currency     TEXT NOT NULL,
    date         TEXT NOT NULL,      -- ISO 8601 with the writer's offset
    date_ms      INTEGER NOT NULL,   -- the same instant, ms since 1970 UTC
    month        TEXT NOT NULL,      -- YYYY-MM in the writer's offset
    category_id  TEXT,
    payment      TEXT,
    memo         TEXT,
    tags         TEXT NOT NULL,      -- JSON array, sorted
    repeat       TEXT NOT NULL,
    attachments  TEXT NOT NULL       -- JSON array of SHA-256 hex digests
) WITHOUT ROWID;
CREATE INDEX expenses_by_month ON expenses (month, date_ms);
CREATE INDEX expenses_by_date ON expenses (date_ms);
CREATE INDEX expenses_by_category ON expenses (category_id, date_ms);
CREATE INDEX expenses_month_totals ON expenses (month, kind, currency, category_id, payment, amount);

CREATE TABLE expense_tags (
    expense_id  TEXT NOT NULL,
    tag         TEXT NOT NULL,
    PRIMARY KEY (expense_id, tag)
) WITHOUT ROWID;
CREATE INDEX expense_tags_by_tag ON expense_tags (tag, expense_id);

CREATE TABLE categories (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    parent_id  TEXT,
    icon       TEXT,
    kind       TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX categories_by_parent ON categories (parent_id);

CREATE TABLE todos (
    id            TEXT PRIMARY KEY,
    title         TEXT NOT NULL,
    memo          TEXT,
    start_date    TEXT,
    end_date      TEXT,
    checks        TEXT NOT NULL,     -- JSON array of booleans
    checks_done   INTEGER NOT NULL,
    percentage    REAL NOT NULL,     -- derived: checks_done / count(checks) × 100, 0 when empty
    is_challenge  INTEGER NOT NULL,
    is_completed  INTEGER NOT NULL,
    attachments   TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE settings (
    scope  TEXT NOT NULL,            -- replicated | local
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,            -- canonical JSON
    PRIMARY KEY (scope, key)
) WITHOUT ROWID;
