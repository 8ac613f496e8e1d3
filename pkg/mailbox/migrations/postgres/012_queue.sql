-- Version 12 (PostgreSQL twin of ../012_queue.sql): the queue of spawns
-- waiting for a slot on their host.
CREATE TABLE queue (
  team        TEXT    NOT NULL,
  name        TEXT    NOT NULL,
  run         TEXT    NOT NULL,
  host        TEXT    NOT NULL,
  max_running BIGINT  NOT NULL,
  queued_at   BIGINT  NOT NULL,
  PRIMARY KEY (team, name)
);
CREATE INDEX queue_by_host ON queue (host, queued_at);
CREATE INDEX agents_by_host ON agents (host, state);
-- A launch in a git worktree of its own (spawn --worktree, type.conf
-- worktree=yes) records the worktree's path and branch; '' for any other.
ALTER TABLE agents ADD COLUMN worktree TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN branch TEXT NOT NULL DEFAULT '';
