-- Verification codes sent, for the hourly limits per destination and per wallet
-- (identities/code-send-budget.ts). `subject` is `to:` and a keyed digest of the email address or
-- phone number (never the value itself), or `wallet:` and the wallet. Rows older than an hour are
-- deleted as new ones are written.
CREATE TABLE identity_code_sends (
  subject text NOT NULL,
  sent_at timestamptz NOT NULL
);
CREATE INDEX identity_code_sends_subject_sent ON identity_code_sends (subject, sent_at);
