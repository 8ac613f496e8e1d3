-- Version 11 (PostgreSQL twin of ../011_runs.sql): one record per agent run, kept after the agent's
-- latest launch moves on: how it ended and why (end, detail; "end" is an SQL
-- word, hence the column ending), the CLI's session, when a limit resets,
-- the tokens the model reported and the cost. The supervisor writes it at
-- the run's start and end; spawn runs and spawn list read it.
CREATE TABLE IF NOT EXISTS runs (
  team              TEXT    NOT NULL,
  name              TEXT    NOT NULL,
  run               TEXT    NOT NULL,
  type              TEXT    NOT NULL DEFAULT '',
  started_at        BIGINT  NOT NULL,
  ended_at          BIGINT ,
  ending            TEXT    NOT NULL DEFAULT '',
  detail            TEXT    NOT NULL DEFAULT '',
  exit_code         BIGINT ,
  session           TEXT    NOT NULL DEFAULT '',
  resets_at         BIGINT ,
  tokens_input      BIGINT  NOT NULL DEFAULT 0,
  tokens_output     BIGINT  NOT NULL DEFAULT 0,
  tokens_cache_read BIGINT  NOT NULL DEFAULT 0,
  tokens_cache_write BIGINT  NOT NULL DEFAULT 0,
  cost_usd          DOUBLE PRECISION,
  PRIMARY KEY (team, run)
);
-- spawn runs <team> [<name>] --since: one agent's or a team's runs by time.
CREATE INDEX IF NOT EXISTS runs_by_agent ON runs (team, name, started_at);
CREATE INDEX IF NOT EXISTS runs_by_team ON runs (team, started_at);
