-- As-of reads by moment (issue 18): the log index the views reached by the end of each second
-- in which they moved (one row per second, the latest index of that second). Seconds never go
-- backwards here: a clock set back records under the latest second already written. Not
-- derived from the log, so a rebuild carries the rows over from the generation it replaces.
CREATE TABLE projection_history (
    second     INTEGER PRIMARY KEY,
    last_index INTEGER NOT NULL
) WITHOUT ROWID;
