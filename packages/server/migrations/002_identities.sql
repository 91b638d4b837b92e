-- Wallet identities: a challenge is bound to what its signature may do, so a signature given to
-- register cannot be replayed to delete (and the other way round).
ALTER TABLE identity_challenges ADD COLUMN IF NOT EXISTS purpose text NOT NULL DEFAULT 'register'
  CHECK (purpose IN ('register', 'delete'));

-- Erasing a wallet deletes by wallet in each of these tables.
CREATE INDEX IF NOT EXISTS identity_challenges_wallet ON identity_challenges (wallet);
CREATE INDEX IF NOT EXISTS telegram_link_tokens_wallet ON telegram_link_tokens (wallet);
CREATE INDEX IF NOT EXISTS subscriptions_wallet ON subscriptions (wallet);
