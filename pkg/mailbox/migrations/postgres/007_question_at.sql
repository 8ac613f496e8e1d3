-- Version 7 (PostgreSQL twin of ../007_question_at.sql): the question
-- comment's GitHub creation time becomes a column of the ask, moved from the
-- "ask/<id>/question_at" team settings.
ALTER TABLE asks ADD COLUMN question_at BIGINT;
UPDATE asks SET question_at = (
  SELECT (extract(epoch FROM s.value::timestamptz) * 1000000000)::bigint
  FROM settings s
  WHERE s.team = asks.team AND s.key = 'ask/' || asks.id || '/question_at');
DELETE FROM settings WHERE key LIKE 'ask/%/question_at';
