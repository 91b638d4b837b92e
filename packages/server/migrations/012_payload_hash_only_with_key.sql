-- A notification's payload hash only ever answers one question: does a request reusing its
-- idempotency key carry the same payload? Rows sent without a key are never compared, so they no
-- longer store one (64 bytes less per row, and no hashing on the send path).
ALTER TABLE notifications ALTER COLUMN payload_hash DROP NOT NULL;
