-- Reports over months (issue 34): each month's income and spending per category (as shown:
-- the standing category of merged duplicates; '' for none) and currency, kept by triggers
-- inside the projector's own transactions, so a 12-month report reads at most 12 × categories
-- × currencies rows whatever the number of expenses. Amounts as amount / 10^9 and
-- amount % 10^9, whose sums cannot overflow; n counts the expenses.
CREATE TABLE month_totals (
    month        TEXT NOT NULL,
    category_id  TEXT NOT NULL,
    kind         TEXT NOT NULL,
    currency     TEXT NOT NULL,
    high         INTEGER NOT NULL,
    low          INTEGER NOT NULL,
    n            INTEGER NOT NULL,
    PRIMARY KEY (month, category_id, kind, currency)
) WITHOUT ROWID;

CREATE TRIGGER month_totals_insert AFTER INSERT ON expenses BEGIN
    INSERT INTO month_totals (month, category_id, kind, currency, high, low, n)
    VALUES (NEW.month, COALESCE(NEW.category_id, ''), NEW.kind, NEW.currency, NEW.amount / 1000000000, NEW.amount % 1000000000, 1)
    ON CONFLICT (month, category_id, kind, currency) DO UPDATE SET high = high + excluded.high, low = low + excluded.low, n = n + 1;
END;

CREATE TRIGGER month_totals_delete AFTER DELETE ON expenses BEGIN
    UPDATE month_totals SET high = high - OLD.amount / 1000000000, low = low - OLD.amount % 1000000000, n = n - 1
    WHERE month = OLD.month AND category_id = COALESCE(OLD.category_id, '') AND kind = OLD.kind AND currency = OLD.currency;
END;

CREATE TRIGGER month_totals_update AFTER UPDATE OF month, category_id, kind, currency, amount ON expenses BEGIN
    UPDATE month_totals SET high = high - OLD.amount / 1000000000, low = low - OLD.amount % 1000000000, n = n - 1
    WHERE month = OLD.month AND category_id = COALESCE(OLD.category_id, '') AND kind = OLD.kind AND currency = OLD.currency;
    INSERT INTO month_totals (month, category_id, kind, currency, high, low, n)
    VALUES (NEW.month, COALESCE(NEW.category_id, ''), NEW.kind, NEW.currency, NEW.amount / 1000000000, NEW.amount % 1000000000, 1)
    ON CONFLICT (month, category_id, kind, currency) DO UPDATE SET high = high + excluded.high, low = low + excluded.low, n = n + 1;
END;

-- What the views already held.
INSERT INTO month_totals (month, category_id, kind, currency, high, low, n)
SELECT month, COALESCE(category_id, ''), kind, currency, SUM(amount / 1000000000), SUM(amount % 1000000000), count(*)
FROM expenses GROUP BY month, COALESCE(category_id, ''), kind, currency;
