-- An expense's payee (the merchant or payer), event schema version 2. Old events have none,
-- so the column starts NULL everywhere and no view needs re-projecting. The index covers a
-- month's top payees (the summary reads it alone, never the table: without it the summary
-- was 3-4x slower at 100k expenses) and the `payee` filter within a month.
ALTER TABLE expenses ADD COLUMN payee TEXT;
CREATE INDEX expenses_month_payees ON expenses (month, kind, payee, currency, amount);
