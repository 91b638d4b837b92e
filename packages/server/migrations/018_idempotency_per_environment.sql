-- Idempotency keys are per protocol and environment: a key used with a sandbox key no longer
-- answers a live send with the same key as a `duplicate` of the sandbox notification (which was
-- never delivered and never charged), nor the other way round. Test and live traffic are kept
-- apart the way Stripe keeps test and live mode apart.
CREATE UNIQUE INDEX IF NOT EXISTS notifications_idempotency_env ON notifications (protocol_id, environment, idempotency_key) WHERE idempotency_key IS NOT NULL;
DROP INDEX IF EXISTS notifications_idempotency;
ALTER INDEX notifications_idempotency_env RENAME TO notifications_idempotency;
