-- Version 6 (number 006 is the drain lease's): a drain claims its messages
-- in a short transaction and marks them read in another after writing them,
-- so no reader, however slow, holds the write lock. Between the two the
-- messages are leased: claim_token names the drain that holds them,
-- lease_until (Unix nanoseconds) is when another drain may take them again
-- (the holder died, or its reader is slower than the lease). Both are NULL
-- for a message nobody holds.
ALTER TABLE messages ADD COLUMN claim_token INTEGER;
ALTER TABLE messages ADD COLUMN lease_until INTEGER;
