-- One index fewer on every expense write. Re-pointing expenses when a category merge changes
-- finds them through expenses_by_category (category_id = the old winner) and filters on
-- category_ref, so expenses_by_category_ref only cost writes.
DROP INDEX expenses_by_category_ref;
