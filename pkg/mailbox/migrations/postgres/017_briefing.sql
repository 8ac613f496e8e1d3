-- Version 16 (PostgreSQL twin of ../016_briefing.sql): how a re-spawn's run
-- was briefed: 'continued', 'full: <why>', or '' for a person's spawn.
ALTER TABLE runs ADD COLUMN briefing TEXT NOT NULL DEFAULT '';
