-- Version 3: which process an agent run is, exactly, and on which host.
-- pid alone is ambiguous once the process exits (the kernel reuses it) and
-- means nothing on another machine. A run now records the host it runs on,
-- the supervisor's start time (clock ticks after boot, /proc/<pid>/stat) and
-- the boot id beside its pid, and the supervisor renews heartbeat_at every
-- heartbeat_ms while its agent lives: from another host, a heartbeat older
-- than a few intervals means the run is lost. Portable SQL: one ALTER TABLE
-- per column, constant defaults.
ALTER TABLE agents ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN pid_start INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN boot_id TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN heartbeat_at INTEGER;
ALTER TABLE agents ADD COLUMN heartbeat_ms INTEGER NOT NULL DEFAULT 0;
