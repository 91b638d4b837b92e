-- Secret rotation (POST /v1/webhooks/:id/rotate-secret): the secret replaced stays valid until
-- `previous_secret_expires_at`, and requests are signed with both until then (two v1 entries), so a
-- receiver can switch to the new secret without missing or refusing an event.
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_enc text;
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_expires_at timestamptz;
