-- New notifications are counted by the statements that write them (reporting/notification-counts.ts):
-- the send path's batched insert adds its rows to notification_counts in the same statement, and
-- the other writers in the same transaction, after their quota reservation. The statement-level
-- trigger kept a transition table of every inserted row and ran a PL/pgSQL function per statement:
-- about a sixth of PostgreSQL's time per single send. It also counted before a keyed send or a
-- broadcast reserved its quota, the opposite order to the batched insert, so the two could wait
-- on each other's counter and usage rows. Updates and deletes keep their triggers (migration 007).
DROP TRIGGER IF EXISTS notifications_count_insert ON notifications;
DROP FUNCTION IF EXISTS herald_count_notification_inserts();
