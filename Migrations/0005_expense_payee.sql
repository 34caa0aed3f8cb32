-- An expense's payee (the merchant or payer), event schema version 2. Old events have none,
-- so the column starts NULL everywhere and no view needs re-projecting. The index serves the
-- `payee` filter and a month's top payees.
ALTER TABLE expenses ADD COLUMN payee TEXT;
CREATE INDEX expenses_by_payee ON expenses (payee, date_ms);
