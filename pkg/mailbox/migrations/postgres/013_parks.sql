-- Version 13 (PostgreSQL twin of ../013_parks.sql): what keeps an agent from being re-spawned unattended,
-- kept with its latest launch so that it survives restarts. A run that ends
-- on a usage limit parks the agent until the limit resets (parked_until;
-- park_backoff_ms > 0 when the CLI gave no reset and teamkit backs off);
-- limit_ends counts the runs in a row that ended on a limit (the backoff
-- doubles with it). respawn_failures counts the re-spawns by resume in a
-- row that ended in failure (3 make the agent failing until a person
-- spawns it). counted_run is the run whose end these counts last took in,
-- so a retried end counts once. park_claim is the run a resume pass
-- claimed the park for (compare-and-set), park_claimed_at when.
ALTER TABLE agents ADD COLUMN parked_until BIGINT;
ALTER TABLE agents ADD COLUMN park_backoff_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN limit_ends BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN respawn_failures BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN counted_run TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN park_claim TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN park_claimed_at BIGINT;
