-- Split receipts and reconciliation (issue 34), event schema version 7.
--
-- A split receipt's lines: each is part of an expense's amount in a category of its own
-- (NULL: the expense's own). A line may name an expense these views do not hold (a peer's
-- line for an expense not yet received, or deleted since): it waits, counted nowhere, until
-- its expense is here. Category totals read the lines beside the expenses (ProjectionQueries
-- `lineShifts`): a line moves its amount from its expense's category to its own.
CREATE TABLE expense_lines (
    id            TEXT PRIMARY KEY,
    expense_id    TEXT NOT NULL,
    category_ref  TEXT,
    category_id   TEXT,
    amount        INTEGER NOT NULL,
    memo          TEXT
) WITHOUT ROWID;
CREATE INDEX expense_lines_by_expense ON expense_lines (expense_id, amount, category_id);

-- An account reconciled against a statement: up to when, and the statement's balance then.
ALTER TABLE accounts ADD COLUMN reconciled_through TEXT;
ALTER TABLE accounts ADD COLUMN statement_balance INTEGER;
ALTER TABLE accounts ADD COLUMN reconciled_ms INTEGER;
