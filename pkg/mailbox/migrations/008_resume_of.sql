-- Version 8: a launch made by resume records which resume made it ("ask ID
-- resume NANOS": the ask and its resume intent's time), so a pass that
-- crashed between launching the agent and recording the resume is
-- recognised by the next pass from this column, not by searching the task
-- text. '' for every other launch.
ALTER TABLE agents ADD COLUMN resume_of TEXT NOT NULL DEFAULT '';
