-- Version 16 (PostgreSQL twin of ../016_budgets.sql): an agent's budget, kept with its latest launch so
-- that every re-spawn keeps it (0: none), and the one ask its supervisor
-- files when a run goes past it. budget_run is the run whose budget the
-- ask is about ('' for an agent's own ask): one budget ask per run, however
-- often the supervisor restarts or the stream reports past the limit.
ALTER TABLE agents ADD COLUMN budget_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN budget_usd DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE asks ADD COLUMN budget_run TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX asks_one_budget_per_run ON asks (team, agent, budget_run) WHERE budget_run != '';
