-- Version 15: wake on mail (spawn --wake, type.conf wake=mail). wake is
-- 'mail' for an agent whose last spawn asked to be woken by mail, '' for
-- any other; woke_through is the newest message to the agent that a run
-- has covered (its launch, or a wake claimed by a compare-and-set), so one
-- burst of mail wakes the agent once, however many resume passes see it.
ALTER TABLE agents ADD COLUMN wake TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN woke_through INTEGER NOT NULL DEFAULT 0;
