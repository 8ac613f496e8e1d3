-- Version 14: a run's last activity (active_at): when its agent last wrote
-- a line of output or a stream event, as its supervisor saw it. The
-- supervisor keeps that time in memory and writes it with the heartbeat
-- (no write per line), so it is at most one heartbeat old; StartRun sets it
-- to the run's start, a new launch clears it.
ALTER TABLE agents ADD COLUMN active_at INTEGER;
