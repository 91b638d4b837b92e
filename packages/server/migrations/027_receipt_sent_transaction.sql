-- The memo transaction a batch's last write attempt handed to the node, recorded before it went
-- out. It may land although the node answered an error, or after the attempt stopped waiting: the
-- next attempt follows it first, and sends another only once it can no longer land (its blockhash
-- expired), so a batch's root is not written twice.
ALTER TABLE receipt_batches ADD COLUMN IF NOT EXISTS sent_tx text;
ALTER TABLE receipt_batches ADD COLUMN IF NOT EXISTS sent_valid_height bigint;
