-- Version 12: the queue of spawns waiting for a slot on their host (a cap
-- on the agents running there: TEAMKIT_MAX_AGENTS, spawn --max-running).
-- A queued spawn's agent record is in state 'queued'; its row here says
-- where it waits, under which cap, and since when, so that whoever frees a
-- slot (a spawn, a run's supervisor as it ends) starts the oldest first,
-- and the queue outlives the process that waits on it.
CREATE TABLE queue (
  team        TEXT    NOT NULL,
  name        TEXT    NOT NULL,
  run         TEXT    NOT NULL,
  host        TEXT    NOT NULL,
  max_running INTEGER NOT NULL,
  queued_at   INTEGER NOT NULL,
  PRIMARY KEY (team, name)
);
CREATE INDEX queue_by_host ON queue (host, queued_at);
-- The agents counted against a host's cap: its runs not yet ended.
CREATE INDEX agents_by_host ON agents (host, state);
-- A launch in a git worktree of its own (spawn --worktree, type.conf
-- worktree=yes) records the worktree's path and branch; '' for any other.
ALTER TABLE agents ADD COLUMN worktree TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN branch TEXT NOT NULL DEFAULT '';
