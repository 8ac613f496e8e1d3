-- Version 16: how a re-spawn's run was briefed (spawn runs' "briefing"):
-- 'continued' when it continued its CLI's session with only what is new,
-- 'full: <why>' when it wanted to and fell back to the full briefing, ''
-- for a person's spawn.
ALTER TABLE runs ADD COLUMN briefing TEXT NOT NULL DEFAULT '';
