-- Version 11 (runs): one record per agent run, kept after the agent's
-- latest launch moves on: how it ended and why (end, detail; "end" is an SQL
-- word, hence the column ending), the CLI's session, when a limit resets,
-- the tokens the model reported and the cost. The supervisor writes it at
-- the run's start and end; spawn runs and spawn list read it.
CREATE TABLE IF NOT EXISTS runs (
  team              TEXT    NOT NULL,
  name              TEXT    NOT NULL,
  run               TEXT    NOT NULL,
  type              TEXT    NOT NULL DEFAULT '',
  started_at        INTEGER NOT NULL,
  ended_at          INTEGER,
  ending            TEXT    NOT NULL DEFAULT '',
  detail            TEXT    NOT NULL DEFAULT '',
  exit_code         INTEGER,
  session           TEXT    NOT NULL DEFAULT '',
  resets_at         INTEGER,
  tokens_input      INTEGER NOT NULL DEFAULT 0,
  tokens_output     INTEGER NOT NULL DEFAULT 0,
  tokens_cache_read INTEGER NOT NULL DEFAULT 0,
  tokens_cache_write INTEGER NOT NULL DEFAULT 0,
  cost_usd          REAL,
  PRIMARY KEY (team, run)
);
-- spawn runs <team> [<name>] --since: one agent's or a team's runs by time.
CREATE INDEX IF NOT EXISTS runs_by_agent ON runs (team, name, started_at);
CREATE INDEX IF NOT EXISTS runs_by_team ON runs (team, started_at);
