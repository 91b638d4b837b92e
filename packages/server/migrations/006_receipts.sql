-- On-chain receipts. Sandbox receipts are batched apart from production ones (they are written to
-- the in-process litesvm, never to the configured cluster), so receipts and batches carry the
-- environment. A batch records who signed its memo and which verification key its proofs need:
-- the keys are kept by id, so a receipt proven before a key rotation stays verifiable.
ALTER TABLE receipts ADD COLUMN IF NOT EXISTS environment text NOT NULL DEFAULT 'production' CHECK (environment IN ('production', 'sandbox'));
ALTER TABLE receipt_batches ADD COLUMN IF NOT EXISTS environment text NOT NULL DEFAULT 'production' CHECK (environment IN ('production', 'sandbox'));
ALTER TABLE receipt_batches ADD COLUMN IF NOT EXISTS signer text;
ALTER TABLE receipt_batches ADD COLUMN IF NOT EXISTS verification_key_id text;

CREATE TABLE IF NOT EXISTS receipt_verification_keys (
  id text PRIMARY KEY,                              -- sha256 hex of the key's JSON
  verification_key jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- A batch is due twice: once for its memo (status pending) and then for its proofs (status
-- confirmed, until every receipt has one); next_attempt_at is null when nothing is left to do.
CREATE INDEX IF NOT EXISTS receipt_batches_work ON receipt_batches (next_attempt_at) WHERE next_attempt_at IS NOT NULL;

-- The receipt loop's scan for delivered notifications that still need a leaf.
CREATE INDEX IF NOT EXISTS notifications_receipt_pending ON notifications (delivered_at) WHERE receipt_status = 'pending';
