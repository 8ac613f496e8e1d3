-- Version 5 (PostgreSQL twin of ../005_fleet.sql): indexes for the fleet verbs.
-- inbox --reply-to ID: one recipient's unread replies to one message.
CREATE INDEX IF NOT EXISTS messages_unread_replies ON messages (team, recipient, reply_to, id) WHERE read_at IS NULL;
-- inbox list <team>: a team's unread messages in id order.
CREATE INDEX IF NOT EXISTS messages_unread_by_team ON messages (team, id) WHERE read_at IS NULL;
-- inbox list <team> --all: a team's whole history in id order, streamed.
CREATE INDEX IF NOT EXISTS messages_by_team ON messages (team, id);
-- inbox prune: a team's read messages by age.
CREATE INDEX IF NOT EXISTS messages_read_by_age ON messages (team, created_at) WHERE read_at IS NOT NULL;
