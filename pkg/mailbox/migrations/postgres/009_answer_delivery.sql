-- Version 9 (PostgreSQL twin of ../009_answer_delivery.sql): the run resume
-- is about to launch with the ask's answer, recorded before the launch.
ALTER TABLE asks ADD COLUMN launch_run TEXT NOT NULL DEFAULT '';
