-- Version 2: stale answers from its index alone. Each message keeps the
-- first line of its body (at most 200 characters) as preview, and the
-- partial index of unread messages by age covers every column stale reads,
-- so listing the stale messages of a huge mailbox touches only index pages,
-- not rows scattered through the whole file.
ALTER TABLE messages ADD COLUMN preview TEXT NOT NULL DEFAULT '';

-- The first line ends at the first CR or LF, as Go's Preview says.
UPDATE messages
SET preview = substr(body, 1, min(200,
  CASE
    WHEN instr(body, char(13)) > 0 AND (instr(body, char(10)) = 0 OR instr(body, char(13)) < instr(body, char(10)))
      THEN instr(body, char(13)) - 1
    WHEN instr(body, char(10)) > 0 THEN instr(body, char(10)) - 1
    ELSE length(body)
  END))
WHERE read_at IS NULL;

DROP INDEX messages_unread_by_age;
-- read_at is always NULL here, but naming it lets SQLite see that the
-- index covers stale's "read_at IS NULL" too (EXPLAIN QUERY PLAN: USING
-- COVERING INDEX).
CREATE INDEX messages_unread_by_age
  ON messages (team, created_at, id, recipient, sender, subject, reply_to, preview, read_at)
  WHERE read_at IS NULL;
