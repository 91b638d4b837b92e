-- What each notification row costs to write. A broadcast inserts a million rows in one statement
-- and the delivery worker rewrites each row twice, so every index and check on the table is paid
-- millions of times.

-- Notifications of one wallet (GET /v1/notifications?wallet=…) are found through a hash index on
-- the wallet alone instead of a b-tree on (protocol_id, wallet, created_at). Wallet addresses are
-- random, so every insert landed on a random page of that wide b-tree; the hash index holds a
-- 4-byte hash per row. A wallet's rows are few: they are filtered by protocol and sorted after the
-- lookup.
CREATE INDEX IF NOT EXISTS notifications_wallet ON notifications USING hash (wallet);
DROP INDEX IF EXISTS notifications_protocol_wallet;

-- No query looks notifications up by broadcast: a broadcast's counts are kept in broadcast_counts.
DROP INDEX IF EXISTS notifications_broadcast;

-- The foreign key to protocols was checked row by row (a quarter of a million-row broadcast's
-- time). Notifications are only written for the protocol that sent them, authenticated by its key,
-- and protocols are never deleted (the admin API has no such operation), so it guarded nothing the
-- gateway can do.
ALTER TABLE notifications DROP CONSTRAINT IF EXISTS notifications_protocol_id_fkey;
