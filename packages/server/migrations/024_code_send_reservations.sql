-- Verification codes take their place within the hourly limits before they are sent
-- (identities/code-send-budget.ts): `reservation` names the registration that took the place, so
-- the places of codes that did not go out are given back. Rows written before have none.
ALTER TABLE identity_code_sends ADD COLUMN IF NOT EXISTS reservation text;
