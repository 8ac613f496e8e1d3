-- Version 15 (PostgreSQL twin of ../015_wake.sql): wake on mail.
ALTER TABLE agents ADD COLUMN wake TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN woke_through BIGINT NOT NULL DEFAULT 0;
