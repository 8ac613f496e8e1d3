-- Version 1: messages, readiness marks, agents, asks and resume bookkeeping.
-- Times are Unix nanoseconds (UTC); NULL read_at means unread.

CREATE TABLE messages (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  team       TEXT    NOT NULL,
  sender     TEXT    NOT NULL,
  recipient  TEXT    NOT NULL, -- "to" is reserved in SQL
  subject    TEXT    NOT NULL DEFAULT '',
  body       TEXT    NOT NULL,
  reply_to   INTEGER,
  created_at INTEGER NOT NULL,
  read_at    INTEGER
);
-- drain and peek: one recipient's unread messages, oldest first.
CREATE INDEX messages_unread_by_recipient ON messages (team, recipient, id) WHERE read_at IS NULL;
-- stale: a team's unread messages older than a cut-off.
CREATE INDEX messages_unread_by_age ON messages (team, created_at) WHERE read_at IS NULL;
-- list --all: one recipient's whole history.
CREATE INDEX messages_by_recipient ON messages (team, recipient, id);

-- One readiness mark per agent, for the run that made it. consumed_at is set
-- when spawn observed it, so an old mark never passes for a fresh one.
CREATE TABLE ready (
  team        TEXT    NOT NULL,
  name        TEXT    NOT NULL,
  run         TEXT    NOT NULL DEFAULT '',
  marked_at   INTEGER NOT NULL,
  consumed_at INTEGER,
  PRIMARY KEY (team, name)
);

-- The latest launch of each agent: what resume needs to start it again and
-- what stale says about a recipient.
CREATE TABLE agents (
  team       TEXT    NOT NULL,
  name       TEXT    NOT NULL,
  type       TEXT    NOT NULL,
  task       TEXT    NOT NULL DEFAULT '',
  issue      TEXT    NOT NULL DEFAULT '',
  workdir    TEXT    NOT NULL DEFAULT '',
  run        TEXT    NOT NULL,
  pid        INTEGER NOT NULL DEFAULT 0,
  state      TEXT    NOT NULL,
  exit_code  INTEGER,
  log        TEXT    NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (team, name)
);

-- Questions and approval requests escalated to a human.
CREATE TABLE asks (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  team          TEXT    NOT NULL,
  agent         TEXT    NOT NULL,
  run           TEXT    NOT NULL DEFAULT '',
  issue         TEXT    NOT NULL DEFAULT '',
  kind          TEXT    NOT NULL,            -- question | approval
  question      TEXT    NOT NULL,
  state         TEXT    NOT NULL,            -- awaiting | answered
  answer        TEXT    NOT NULL DEFAULT '',
  decided_by    TEXT    NOT NULL DEFAULT '',
  decision      TEXT    NOT NULL DEFAULT '', -- answered | approved | rejected
  source        TEXT    NOT NULL DEFAULT '', -- where the answer came from
  comment_id    INTEGER NOT NULL DEFAULT 0,  -- the question's issue comment
  comment_url   TEXT    NOT NULL DEFAULT '',
  post_error    TEXT    NOT NULL DEFAULT '',
  resumed_run   TEXT    NOT NULL DEFAULT '',
  created_at    INTEGER NOT NULL,
  answered_at   INTEGER
);
-- One ask per run: an agent asks, then exits; re-running ask must not post twice.
CREATE UNIQUE INDEX asks_one_per_run ON asks (team, agent, run) WHERE run != '';
CREATE INDEX asks_by_state ON asks (team, state);

-- A resume in flight: ask id and time only (DESIGN.md, crash safety).
CREATE TABLE resume_intents (
  ask_id     INTEGER PRIMARY KEY,
  created_at INTEGER NOT NULL
);

-- ETags of GitHub resources, so cron passes make conditional requests too.
CREATE TABLE etags (
  url        TEXT    PRIMARY KEY,
  etag       TEXT    NOT NULL,
  updated_at INTEGER NOT NULL
);

-- Per-team settings (resume's pause switch).
CREATE TABLE settings (
  team  TEXT NOT NULL,
  key   TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (team, key)
);
