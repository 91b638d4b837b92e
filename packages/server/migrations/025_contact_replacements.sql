-- A verified email or phone replaced by a registration keeps carrying messages until the new value
-- is verified: the new one waits here (SecretBox ciphertext) and takes the place of the old when
-- its code is verified (identities/register-identity.ts, identity-store.ts).
ALTER TABLE identities ADD COLUMN IF NOT EXISTS email_pending_enc text;
ALTER TABLE identities ADD COLUMN IF NOT EXISTS phone_pending_enc text;
