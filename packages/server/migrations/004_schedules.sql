-- The wall-clock date-time a one-time schedule was asked for, without zone (it is read in
-- schedules.timezone). next_run_at holds the resolved instant and is cleared once the schedule
-- has run or been cancelled, so the request itself is kept here for GET /v1/schedule/:id.
ALTER TABLE schedules ADD COLUMN IF NOT EXISTS scheduled_for timestamp;
