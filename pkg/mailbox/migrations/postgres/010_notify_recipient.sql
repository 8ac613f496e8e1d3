-- A message notifies "team/recipient", not just "team": a waiter on one
-- inbox wakes for its own mail only, instead of every waiter of the team
-- re-checking on every message (and every heartbeat). Names never hold "/".
CREATE OR REPLACE FUNCTION teamkit_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  IF TG_OP = 'DELETE' THEN
    r := OLD;
  ELSE
    r := NEW;
  END IF;
  IF TG_TABLE_NAME = 'messages' THEN
    PERFORM pg_notify('teamkit.' || TG_TABLE_SCHEMA, r.team || '/' || r.recipient);
  ELSE
    PERFORM pg_notify('teamkit.' || TG_TABLE_SCHEMA, r.team);
  END IF;
  RETURN NULL;
END
$$;
