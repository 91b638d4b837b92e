-- Notifications of one wallet are found through a b-tree on wallet instead of the hash index of
-- 008. A hash index keeps every entry of one wallet in one bucket: a wallet that receives
-- thousands of notifications has a chain of overflow pages, and each insert walked that chain to
-- its end, so writing a notification cost more the more its wallet had already received (about
-- 10 µs more per row at 5,000 notifications a wallet). The b-tree finds its page in a few steps
-- and stores a wallet's repeated key once (deduplication), so it stays about as small.
CREATE INDEX IF NOT EXISTS notifications_wallet_tree ON notifications (wallet);
DROP INDEX IF EXISTS notifications_wallet;
ALTER INDEX notifications_wallet_tree RENAME TO notifications_wallet;
