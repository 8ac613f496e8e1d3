-- Version 14 (PostgreSQL twin of ../014_activity.sql): a run's last
-- activity, written with the heartbeat.
ALTER TABLE agents ADD COLUMN IF NOT EXISTS active_at BIGINT;
