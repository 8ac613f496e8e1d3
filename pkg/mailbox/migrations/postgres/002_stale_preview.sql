-- Version 2 (PostgreSQL twin of ../002_stale_preview.sql): stale answers
-- from its index alone. Each message keeps the first line of its body (at
-- most 200 characters) as preview, and the partial index of unread messages
-- by age carries every column stale reads (INCLUDE), so stale is an index-
-- only scan of the unread part, whatever the size of the history.
ALTER TABLE messages ADD COLUMN preview TEXT NOT NULL DEFAULT '';

-- The first line ends at the first CR or LF, as Go's Preview says.
UPDATE messages
SET preview = left(split_part(translate(body, E'\r', E'\n'), E'\n', 1), 200)
WHERE read_at IS NULL;

DROP INDEX messages_unread_by_age;
CREATE INDEX messages_unread_by_age
  ON messages (team, created_at, id) INCLUDE (recipient, sender, subject, reply_to, preview)
  WHERE read_at IS NULL;
