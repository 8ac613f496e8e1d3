-- Version 7: when GitHub says an ask's question comment was created (resume
-- lists replies from then on, in GitHub's clock) is a column of the ask,
-- Unix nanoseconds, NULL until known. It was a team setting keyed
-- "ask/<id>/question_at" holding RFC 3339 text; those move here. GitHub's
-- times are whole seconds, so strftime('%s') keeps them exactly.
ALTER TABLE asks ADD COLUMN question_at INTEGER;
UPDATE asks SET question_at = (
  SELECT CAST(strftime('%s', s.value) AS INTEGER) * 1000000000
  FROM settings s
  WHERE s.team = asks.team AND s.key = 'ask/' || asks.id || '/question_at');
DELETE FROM settings WHERE key LIKE 'ask/%/question_at';
