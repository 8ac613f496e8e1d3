-- Version 8 (PostgreSQL twin of ../008_resume_of.sql): which resume made
-- an agent's launch, '' for any other launch.
ALTER TABLE agents ADD COLUMN resume_of TEXT NOT NULL DEFAULT '';
