-- Version 6 (PostgreSQL twin of ../006_drain_lease.sql): a drain's lease on
-- the messages it claimed and has not yet marked read.
ALTER TABLE messages ADD COLUMN claim_token BIGINT;
ALTER TABLE messages ADD COLUMN lease_until BIGINT;
