-- Version 9: the answer's delivery, one state machine on the ask (see
-- docs/DESIGN.md, "Answer delivery"). launch_run is the run resume is about
-- to launch with the answer, recorded before the launch; resumed_run is set
-- by that run's supervisor, with a compare-and-set on launch_run, before it
-- starts the agent. A pass that withdraws or replaces launch_run fences a
-- launch it no longer wants: that supervisor then never starts its agent.
ALTER TABLE asks ADD COLUMN launch_run TEXT NOT NULL DEFAULT '';
