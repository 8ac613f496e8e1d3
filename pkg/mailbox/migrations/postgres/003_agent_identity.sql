-- Version 3 (PostgreSQL twin of ../003_agent_identity.sql): which process an
-- agent run is, exactly, and on which host — the host, the supervisor's start
-- time (clock ticks after boot) and boot id beside its pid, and the heartbeat
-- the supervisor renews every heartbeat_ms while its agent lives.
ALTER TABLE agents ADD COLUMN IF NOT EXISTS host TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN IF NOT EXISTS pid_start BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN IF NOT EXISTS boot_id TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN IF NOT EXISTS heartbeat_at BIGINT;
ALTER TABLE agents ADD COLUMN IF NOT EXISTS heartbeat_ms BIGINT NOT NULL DEFAULT 0;
