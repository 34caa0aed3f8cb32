-- A balance at 1,000,000 events in well under 20 ms (issue 34): what the expenses and transfers
-- did to each account, per UTC day (floor of date_ms / 86,400,000) and currency, kept by
-- triggers inside the projector's own transactions, so it always agrees with the rows. A
-- balance sums the days before the moment's day from here, and reads that one day's rows.
-- Signed parts: an income adds, an expense or a transfer out subtracts; each amount is kept
-- as amount / 10^9 and amount % 10^9 (their sums cannot overflow). Transfers have currency ''
-- (they are in their accounts' currencies by definition). n counts the rows of the day.
CREATE TABLE account_days (
    account_id  TEXT NOT NULL,
    day         INTEGER NOT NULL,
    currency    TEXT NOT NULL,
    high        INTEGER NOT NULL,
    low         INTEGER NOT NULL,
    n           INTEGER NOT NULL,
    PRIMARY KEY (account_id, day, currency)
) WITHOUT ROWID;

CREATE TRIGGER account_days_expense_insert AFTER INSERT ON expenses WHEN NEW.account_id IS NOT NULL BEGIN
    INSERT INTO account_days (account_id, day, currency, high, low, n)
    VALUES (NEW.account_id, (NEW.date_ms - ((NEW.date_ms % 86400000) + 86400000) % 86400000) / 86400000, NEW.currency,
            CASE NEW.kind WHEN 'income' THEN 1 ELSE -1 END * (NEW.amount / 1000000000),
            CASE NEW.kind WHEN 'income' THEN 1 ELSE -1 END * (NEW.amount % 1000000000), 1)
    ON CONFLICT (account_id, day, currency) DO UPDATE SET high = high + excluded.high, low = low + excluded.low, n = n + 1;
END;

CREATE TRIGGER account_days_expense_delete AFTER DELETE ON expenses WHEN OLD.account_id IS NOT NULL BEGIN
    UPDATE account_days SET
        high = high - CASE OLD.kind WHEN 'income' THEN 1 ELSE -1 END * (OLD.amount / 1000000000),
        low = low - CASE OLD.kind WHEN 'income' THEN 1 ELSE -1 END * (OLD.amount % 1000000000),
        n = n - 1
    WHERE account_id = OLD.account_id AND day = (OLD.date_ms - ((OLD.date_ms % 86400000) + 86400000) % 86400000) / 86400000 AND currency = OLD.currency;
END;

CREATE TRIGGER account_days_expense_update AFTER UPDATE OF account_id, date_ms, kind, currency, amount ON expenses
WHEN OLD.account_id IS NOT NULL OR NEW.account_id IS NOT NULL BEGIN
    UPDATE account_days SET
        high = high - CASE OLD.kind WHEN 'income' THEN 1 ELSE -1 END * (OLD.amount / 1000000000),
        low = low - CASE OLD.kind WHEN 'income' THEN 1 ELSE -1 END * (OLD.amount % 1000000000),
        n = n - 1
    WHERE OLD.account_id IS NOT NULL AND account_id = OLD.account_id
        AND day = (OLD.date_ms - ((OLD.date_ms % 86400000) + 86400000) % 86400000) / 86400000 AND currency = OLD.currency;
    INSERT INTO account_days (account_id, day, currency, high, low, n)
    SELECT NEW.account_id, (NEW.date_ms - ((NEW.date_ms % 86400000) + 86400000) % 86400000) / 86400000, NEW.currency,
            CASE NEW.kind WHEN 'income' THEN 1 ELSE -1 END * (NEW.amount / 1000000000),
            CASE NEW.kind WHEN 'income' THEN 1 ELSE -1 END * (NEW.amount % 1000000000), 1
    WHERE NEW.account_id IS NOT NULL
    ON CONFLICT (account_id, day, currency) DO UPDATE SET high = high + excluded.high, low = low + excluded.low, n = n + 1;
END;

CREATE TRIGGER account_days_transfer_insert AFTER INSERT ON transfers BEGIN
    INSERT INTO account_days (account_id, day, currency, high, low, n)
    VALUES (NEW.account_id, (NEW.date_ms - ((NEW.date_ms % 86400000) + 86400000) % 86400000) / 86400000, '',
            -(NEW.amount / 1000000000), -(NEW.amount % 1000000000), 1)
    ON CONFLICT (account_id, day, currency) DO UPDATE SET high = high + excluded.high, low = low + excluded.low, n = n + 1;
    INSERT INTO account_days (account_id, day, currency, high, low, n)
    VALUES (NEW.to_account_id, (NEW.date_ms - ((NEW.date_ms % 86400000) + 86400000) % 86400000) / 86400000, '',
            COALESCE(NEW.to_amount, NEW.amount) / 1000000000, COALESCE(NEW.to_amount, NEW.amount) % 1000000000, 1)
    ON CONFLICT (account_id, day, currency) DO UPDATE SET high = high + excluded.high, low = low + excluded.low, n = n + 1;
END;

CREATE TRIGGER account_days_transfer_delete AFTER DELETE ON transfers BEGIN
    UPDATE account_days SET high = high + OLD.amount / 1000000000, low = low + OLD.amount % 1000000000, n = n - 1
    WHERE account_id = OLD.account_id AND day = (OLD.date_ms - ((OLD.date_ms % 86400000) + 86400000) % 86400000) / 86400000 AND currency = '';
    UPDATE account_days SET
        high = high - COALESCE(OLD.to_amount, OLD.amount) / 1000000000, low = low - COALESCE(OLD.to_amount, OLD.amount) % 1000000000, n = n - 1
    WHERE account_id = OLD.to_account_id AND day = (OLD.date_ms - ((OLD.date_ms % 86400000) + 86400000) % 86400000) / 86400000 AND currency = '';
END;

-- An update of a transfer: as a delete of the old row and an insert of the new one.
CREATE TRIGGER account_days_transfer_update AFTER UPDATE OF account_id, to_account_id, amount, to_amount, date_ms ON transfers BEGIN
    UPDATE account_days SET high = high + OLD.amount / 1000000000, low = low + OLD.amount % 1000000000, n = n - 1
    WHERE account_id = OLD.account_id AND day = (OLD.date_ms - ((OLD.date_ms % 86400000) + 86400000) % 86400000) / 86400000 AND currency = '';
    UPDATE account_days SET
        high = high - COALESCE(OLD.to_amount, OLD.amount) / 1000000000, low = low - COALESCE(OLD.to_amount, OLD.amount) % 1000000000, n = n - 1
    WHERE account_id = OLD.to_account_id AND day = (OLD.date_ms - ((OLD.date_ms % 86400000) + 86400000) % 86400000) / 86400000 AND currency = '';
    INSERT INTO account_days (account_id, day, currency, high, low, n)
    VALUES (NEW.account_id, (NEW.date_ms - ((NEW.date_ms % 86400000) + 86400000) % 86400000) / 86400000, '',
            -(NEW.amount / 1000000000), -(NEW.amount % 1000000000), 1)
    ON CONFLICT (account_id, day, currency) DO UPDATE SET high = high + excluded.high, low = low + excluded.low, n = n + 1;
    INSERT INTO account_days (account_id, day, currency, high, low, n)
    VALUES (NEW.to_account_id, (NEW.date_ms - ((NEW.date_ms % 86400000) + 86400000) % 86400000) / 86400000, '',
            COALESCE(NEW.to_amount, NEW.amount) / 1000000000, COALESCE(NEW.to_amount, NEW.amount) % 1000000000, 1)
    ON CONFLICT (account_id, day, currency) DO UPDATE SET high = high + excluded.high, low = low + excluded.low, n = n + 1;
END;

-- What the views already held (0008's rows), counted in.
INSERT INTO account_days (account_id, day, currency, high, low, n)
SELECT account_id, (date_ms - ((date_ms % 86400000) + 86400000) % 86400000) / 86400000 AS d, currency,
       SUM(CASE kind WHEN 'income' THEN 1 ELSE -1 END * (amount / 1000000000)), SUM(CASE kind WHEN 'income' THEN 1 ELSE -1 END * (amount % 1000000000)), count(*)
FROM expenses WHERE account_id IS NOT NULL GROUP BY account_id, d, currency;
INSERT INTO account_days (account_id, day, currency, high, low, n)
SELECT account_id, d, '', SUM(-(amount / 1000000000)), SUM(-(amount % 1000000000)), count(*)
FROM (SELECT account_id, (date_ms - ((date_ms % 86400000) + 86400000) % 86400000) / 86400000 AS d, amount FROM transfers) WHERE true GROUP BY account_id, d
ON CONFLICT (account_id, day, currency) DO UPDATE SET high = high + excluded.high, low = low + excluded.low, n = n + excluded.n;
INSERT INTO account_days (account_id, day, currency, high, low, n)
SELECT to_account_id, d, '', SUM(arriving / 1000000000), SUM(arriving % 1000000000), count(*)
FROM (SELECT to_account_id, (date_ms - ((date_ms % 86400000) + 86400000) % 86400000) / 86400000 AS d, COALESCE(to_amount, amount) AS arriving FROM transfers)
WHERE true GROUP BY to_account_id, d
ON CONFLICT (account_id, day, currency) DO UPDATE SET high = high + excluded.high, low = low + excluded.low, n = n + excluded.n;
