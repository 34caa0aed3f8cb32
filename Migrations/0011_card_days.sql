-- A card's closing and payment days (issue 34, card bills): the bills are worked out when
-- asked, from the card's expenses and the transfers into it.
ALTER TABLE accounts ADD COLUMN closing_day INTEGER;
ALTER TABLE accounts ADD COLUMN payment_day INTEGER;
