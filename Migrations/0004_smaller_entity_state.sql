-- entity_state.state is now written in version 2 of its encoding (each stamp once per
-- entity, referenced by position; see EntityStateCodec), less than half the bytes of version 1.
-- The views are projections of the log, so instead of converting blobs in SQL they are
-- emptied here; the next catch-up finds the checkpoint at 0 and loads them again from the
-- log in one pass (a first load), in the new encoding.
DELETE FROM entity_state;
DELETE FROM expenses;
DELETE FROM expense_tags;
DELETE FROM categories;
DELETE FROM category_merges;
DELETE FROM todos;
DELETE FROM settings;
DELETE FROM conflicts;
UPDATE projection_checkpoint SET last_index = 0;
