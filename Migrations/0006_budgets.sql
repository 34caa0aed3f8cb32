-- Budgets (issue 18): one row per live budget. category_ref is the category as written;
-- category_id the one that stands for it (itself, or the winner of a merge), re-pointed by
-- CategoryViews like expenses'. No category: a budget of all spending.
CREATE TABLE budgets (
    id           TEXT PRIMARY KEY,
    category_ref TEXT,
    category_id  TEXT,
    amount       INTEGER NOT NULL,
    currency     TEXT NOT NULL,
    from_month   TEXT NOT NULL,
    to_month     TEXT
) WITHOUT ROWID;
CREATE INDEX budgets_by_category_ref ON budgets (category_ref);
CREATE INDEX budgets_by_from_month ON budgets (from_month);
