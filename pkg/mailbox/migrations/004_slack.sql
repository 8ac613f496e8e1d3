-- Version 4 (number 004 is the Slack channel's): an ask's Slack message,
-- and the Slack events that may answer it.
--
-- slack_channel and slack_ts name the chat.postMessage that mirrors the
-- question ('' until posted); slack_error says why posting failed, so that
-- resume posts it later, once.
ALTER TABLE asks ADD COLUMN slack_channel TEXT NOT NULL DEFAULT '';
ALTER TABLE asks ADD COLUMN slack_ts TEXT NOT NULL DEFAULT '';
ALTER TABLE asks ADD COLUMN slack_error TEXT NOT NULL DEFAULT '';
-- An event names the message it is on by channel and ts.
CREATE INDEX asks_by_slack_message ON asks (slack_channel, slack_ts) WHERE slack_ts != '';

-- A Slack event on an ask's message or thread (a reaction, or a reply), as
-- Socket Mode delivered it. It is stored before the event is acknowledged,
-- and judged by the resume pass (who may answer, which reaction decides),
-- so nothing is lost while the team is paused or between event and pass.
-- event_key makes a redelivered event a no-op.
CREATE TABLE slack_events (
  ask_id     INTEGER NOT NULL,
  event_key  TEXT    NOT NULL,
  kind       TEXT    NOT NULL,            -- reaction | reply
  slack_user TEXT    NOT NULL,
  reaction   TEXT    NOT NULL DEFAULT '', -- kind reaction: the emoji name
  text       TEXT    NOT NULL DEFAULT '', -- kind reply: what the person wrote
  channel    TEXT    NOT NULL,
  thread_ts  TEXT    NOT NULL,            -- the ask's message
  ts         TEXT    NOT NULL,            -- the reply's ts, or the reaction's event_ts
  created_at INTEGER NOT NULL,
  PRIMARY KEY (ask_id, event_key)
);
