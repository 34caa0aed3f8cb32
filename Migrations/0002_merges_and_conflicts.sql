-- Category de-duplication and the conflict journal.

-- The category id as written; expenses.category_id is the category that stands for it
-- (itself, or the winner of its (normalized name, parent) key).
ALTER TABLE expenses ADD COLUMN category_ref TEXT;
CREATE INDEX expenses_by_category_ref ON expenses (category_ref);

-- Categories merged into another, and why. `categories` shows winners only; a loser's
-- sub-categories and expenses show under its winner.
CREATE TABLE category_merges (
    loser_id   TEXT PRIMARY KEY,
    winner_id  TEXT NOT NULL,
    reason     TEXT NOT NULL
) WITHOUT ROWID;

-- Every property write that lost to a concurrent one (neither saw the other).
CREATE TABLE conflicts (
    entity_id       TEXT NOT NULL,
    entity_type     TEXT NOT NULL,
    property        TEXT NOT NULL,
    loser_hlc       TEXT NOT NULL,     -- millis.counter
    loser_origin    TEXT NOT NULL,
    losing_value    TEXT NOT NULL,     -- JSON
    winner_hlc      TEXT NOT NULL,
    winner_origin   TEXT NOT NULL,
    winning_value   TEXT NOT NULL,
    PRIMARY KEY (entity_id, property, loser_hlc, loser_origin)
) WITHOUT ROWID;
