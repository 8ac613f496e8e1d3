-- Version 4 (PostgreSQL twin of ../004_slack.sql): an ask's Slack message,
-- and the Slack events that may answer it.
ALTER TABLE asks ADD COLUMN slack_channel TEXT NOT NULL DEFAULT '';
ALTER TABLE asks ADD COLUMN slack_ts TEXT NOT NULL DEFAULT '';
ALTER TABLE asks ADD COLUMN slack_error TEXT NOT NULL DEFAULT '';
CREATE INDEX asks_by_slack_message ON asks (slack_channel, slack_ts) WHERE slack_ts != '';

CREATE TABLE slack_events (
  ask_id     BIGINT NOT NULL,
  event_key  TEXT   NOT NULL,
  kind       TEXT   NOT NULL,            -- reaction | reply
  slack_user TEXT   NOT NULL,
  reaction   TEXT   NOT NULL DEFAULT '', -- kind reaction: the emoji name
  text       TEXT   NOT NULL DEFAULT '', -- kind reply: what the person wrote
  channel    TEXT   NOT NULL,
  thread_ts  TEXT   NOT NULL,            -- the ask's message
  ts         TEXT   NOT NULL,            -- the reply's ts, or the reaction's event_ts
  created_at BIGINT NOT NULL,
  PRIMARY KEY (ask_id, event_key)
);
