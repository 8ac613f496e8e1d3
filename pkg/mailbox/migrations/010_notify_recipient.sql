-- PostgreSQL 009 makes a message notify its recipient's waiters alone. A SQLite
-- waiter wakes on any change to the file (inotify): nothing to change here.
SELECT 1;
