-- Idempotency keys of the calls that create something other than a notification (POST
-- /v1/broadcast, /v1/schedule, /v1/schedule/cron), read from the Idempotency-Key header: the
-- first answer is kept with the payload's hash, so a retry gets that answer instead of a second
-- broadcast or schedule. Per protocol and environment, like the keys of sends. The row is written
-- in the transaction that creates the resource, so the unique key makes concurrent retries wait
-- for the first and then read its answer.
CREATE TABLE creation_keys (
  protocol_id text NOT NULL REFERENCES protocols (id) ON DELETE CASCADE,
  environment text NOT NULL,
  idempotency_key text NOT NULL,
  payload_hash text NOT NULL,
  response jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (protocol_id, environment, idempotency_key)
);
