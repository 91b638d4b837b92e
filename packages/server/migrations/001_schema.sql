-- Herald's whole schema. Every background job is a row with a due time and a lease
-- (next_attempt_at / next_run_at + locked_until), claimed with FOR UPDATE SKIP LOCKED.

-- Accounts -----------------------------------------------------------------------------------------
CREATE TABLE protocols (
  id text PRIMARY KEY,                              -- proto_<ulid>
  name text NOT NULL,
  tier smallint NOT NULL CHECK (tier BETWEEN 0 AND 3),
  overage_enabled boolean NOT NULL DEFAULT false,
  subscription_expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id text PRIMARY KEY,                              -- key_<ulid>
  protocol_id text NOT NULL REFERENCES protocols(id) ON DELETE CASCADE,
  key_hash text NOT NULL UNIQUE,                    -- sha256 hex of the full key; the key itself is never stored
  key_prefix text NOT NULL,                         -- e.g. hrld_live_AbCd, for display
  environment text NOT NULL CHECK (environment IN ('production', 'sandbox')),
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_protocol ON api_keys (protocol_id);

-- Monthly send counters (UTC calendar month). Reservation is one atomic UPDATE with the limit in its WHERE.
CREATE TABLE usage_periods (
  protocol_id text NOT NULL REFERENCES protocols(id) ON DELETE CASCADE,
  period_start date NOT NULL,
  sends integer NOT NULL DEFAULT 0,
  quota_exceeded_at timestamptz,                    -- set once per period, when the quota.exceeded event is written
  PRIMARY KEY (protocol_id, period_start)
);

CREATE TABLE request_log (
  id bigserial PRIMARY KEY,
  protocol_id text NOT NULL,
  method text NOT NULL,
  endpoint text NOT NULL,
  status_code smallint NOT NULL,
  latency_ms integer NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX request_log_protocol_time ON request_log (protocol_id, created_at DESC, id DESC);

-- Wallet identities (contacts encrypted with AES-256-GCM; *_hash columns are keyed HMACs for lookups) -
CREATE TABLE identities (
  wallet text PRIMARY KEY,
  email_enc text,
  email_verified_at timestamptz,
  phone_enc text,
  phone_verified_at timestamptz,
  telegram_chat_enc text,
  telegram_linked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX identities_created ON identities (created_at);

CREATE TABLE identity_challenges (
  nonce text PRIMARY KEY,
  wallet text NOT NULL,
  message text NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX identity_challenges_expiry ON identity_challenges (expires_at);

CREATE TABLE identity_codes (
  wallet text NOT NULL,
  channel text NOT NULL CHECK (channel IN ('email', 'sms')),
  code_hash text NOT NULL,
  attempts smallint NOT NULL DEFAULT 0,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (wallet, channel)
);

CREATE TABLE telegram_link_tokens (
  token_hash text PRIMARY KEY,
  wallet text NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);

-- Subscriptions: one row per (protocol, wallet); unsubscribing keeps the row with subscribed = false.
CREATE TABLE subscriptions (
  protocol_id text NOT NULL REFERENCES protocols(id) ON DELETE CASCADE,
  wallet text NOT NULL,
  channels text[] NOT NULL,
  subscribed boolean NOT NULL DEFAULT true,
  subscribed_at timestamptz NOT NULL DEFAULT now(),
  unsubscribed_at timestamptz,
  PRIMARY KEY (protocol_id, wallet)
);
CREATE INDEX subscriptions_active ON subscriptions (protocol_id) WHERE subscribed;

-- Templates and their immutable versions ------------------------------------------------------------
CREATE TABLE email_templates (
  id text PRIMARY KEY,                              -- tmpl_<ulid>
  protocol_id text NOT NULL REFERENCES protocols(id) ON DELETE CASCADE,
  name text NOT NULL,
  category text NOT NULL,
  current_version integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
CREATE INDEX email_templates_protocol ON email_templates (protocol_id, created_at DESC) WHERE deleted_at IS NULL;

CREATE TABLE email_template_versions (
  template_id text NOT NULL REFERENCES email_templates(id) ON DELETE CASCADE,
  version integer NOT NULL,
  subject_template text NOT NULL,
  html_source text NOT NULL,
  text_source text NOT NULL,
  service_footer text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (template_id, version)
);

-- Broadcasts and schedules ---------------------------------------------------------------------------
CREATE TABLE broadcasts (
  id text PRIMARY KEY,                              -- bcast_<ulid>
  protocol_id text NOT NULL REFERENCES protocols(id) ON DELETE CASCADE,
  environment text NOT NULL,
  subject text NOT NULL,
  body text NOT NULL,
  category text NOT NULL,
  write_receipt boolean NOT NULL DEFAULT false,
  template_id text,
  template_version integer,
  total_subscribers integer NOT NULL,
  queued_count integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX broadcasts_protocol ON broadcasts (protocol_id, created_at DESC);

CREATE TABLE schedules (
  id text PRIMARY KEY,                              -- sched_<ulid>
  protocol_id text NOT NULL REFERENCES protocols(id) ON DELETE CASCADE,
  environment text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('once', 'cron')),
  wallet text NOT NULL,
  subject text NOT NULL,
  body text NOT NULL,
  category text NOT NULL,
  priority text NOT NULL DEFAULT 'normal',
  preferred_channel text,
  write_receipt boolean NOT NULL DEFAULT false,
  template_id text,
  template_variables jsonb,
  cron_expr text,
  timezone text NOT NULL DEFAULT 'UTC',
  status text NOT NULL CHECK (status IN ('PENDING', 'COMPLETED', 'FAILED', 'CANCELLED')),
  next_run_at timestamptz,
  locked_until timestamptz,
  last_run_at timestamptz,
  failure_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX schedules_due ON schedules (next_run_at) WHERE status = 'PENDING';
CREATE INDEX schedules_protocol ON schedules (protocol_id, created_at DESC);

CREATE TABLE schedule_runs (
  schedule_id text NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
  occurrence timestamptz NOT NULL,
  notification_id text,
  outcome text NOT NULL,                            -- queued | opted_out | duplicate | failed
  error text,
  fired_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (schedule_id, occurrence)
);

-- Notifications: the row is the delivery job --------------------------------------------------------
CREATE TABLE notifications (
  id text PRIMARY KEY,                              -- bare ULID
  protocol_id text NOT NULL REFERENCES protocols(id) ON DELETE CASCADE,
  environment text NOT NULL CHECK (environment IN ('production', 'sandbox')),
  wallet text NOT NULL,
  subject text NOT NULL,
  body text NOT NULL,
  category text NOT NULL,
  priority text NOT NULL DEFAULT 'normal',
  preferred_channel text,
  channel text,                                     -- chosen channel; null when nothing was queued
  fallback_channel text,                            -- set when a critical send fell back to SMS
  status text NOT NULL CHECK (status IN ('queued', 'sending', 'delivered', 'bounced', 'failed', 'opted_out')),
  idempotency_key text,
  payload_hash text NOT NULL,
  template_id text,
  template_version integer,
  template_variables jsonb,
  broadcast_id text,
  schedule_id text,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  locked_until timestamptz,
  last_error text,
  delivered_at timestamptz,
  write_receipt boolean NOT NULL DEFAULT false,
  receipt_status text NOT NULL DEFAULT 'disabled' CHECK (receipt_status IN ('disabled', 'pending', 'confirmed', 'failed')),
  receipt_requested_at timestamptz,
  receipt_tx text,
  receipt_failure_reason text,
  last_receipt_attempt_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX notifications_idempotency ON notifications (protocol_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX notifications_due ON notifications (next_attempt_at) WHERE status IN ('queued', 'sending');
CREATE INDEX notifications_protocol_time ON notifications (protocol_id, created_at DESC, id DESC);
CREATE INDEX notifications_protocol_wallet ON notifications (protocol_id, wallet, created_at DESC);
CREATE INDEX notifications_broadcast ON notifications (broadcast_id) WHERE broadcast_id IS NOT NULL;

CREATE TABLE delivery_attempts (
  id bigserial PRIMARY KEY,
  notification_id text NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
  attempt integer NOT NULL,
  channel text NOT NULL,
  provider text NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('delivered', 'bounced', 'retry', 'failed')),
  provider_response text,
  error text,
  duration_ms integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX delivery_attempts_notification ON delivery_attempts (notification_id, id);

-- Messages kept by the capture provider (sandbox keys and channels without a provider).
CREATE TABLE captured_messages (
  id text PRIMARY KEY,
  protocol_id text NOT NULL,
  notification_id text,
  environment text NOT NULL,
  wallet text NOT NULL,
  channel text NOT NULL,
  subject text,
  html text,
  text text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX captured_messages_protocol ON captured_messages (protocol_id, created_at DESC, id DESC);

CREATE TABLE engagement_events (
  id bigserial PRIMARY KEY,
  protocol_id text NOT NULL,
  notification_id text NOT NULL,
  wallet text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('open', 'click', 'unsubscribe')),
  url text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX engagement_events_protocol ON engagement_events (protocol_id, created_at);

-- Webhooks -----------------------------------------------------------------------------------------------
CREATE TABLE webhook_endpoints (
  id text PRIMARY KEY,                              -- wh_<ulid>
  protocol_id text NOT NULL REFERENCES protocols(id) ON DELETE CASCADE,
  url text NOT NULL,
  events text[] NOT NULL,
  is_active boolean NOT NULL DEFAULT true,
  secret_enc text NOT NULL,
  failing_since timestamptz,
  disabled_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_protocol ON webhook_endpoints (protocol_id, created_at);

-- Events are written in the transaction of the state change that causes them.
CREATE TABLE events (
  id text PRIMARY KEY,                              -- evt_<ulid>
  protocol_id text NOT NULL REFERENCES protocols(id) ON DELETE CASCADE,
  type text NOT NULL,
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  fanned_out_at timestamptz                         -- null until copied into webhook_deliveries
);
CREATE INDEX events_pending_fanout ON events (created_at) WHERE fanned_out_at IS NULL;
CREATE INDEX events_protocol ON events (protocol_id, created_at DESC);

CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY,                              -- whd_<ulid>
  endpoint_id text NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  event_id text NOT NULL REFERENCES events(id) ON DELETE CASCADE,
  protocol_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  locked_until timestamptz,
  last_status_code smallint,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz
);
CREATE UNIQUE INDEX webhook_deliveries_event_endpoint ON webhook_deliveries (event_id, endpoint_id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);

CREATE TABLE webhook_attempts (
  id bigserial PRIMARY KEY,
  delivery_id text NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  status_code smallint,
  latency_ms integer NOT NULL,
  response_body text,                               -- first 1 KB
  error text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);

-- On-chain receipts --------------------------------------------------------------------------------------
CREATE TABLE receipt_batches (
  id text PRIMARY KEY,                              -- rbat_<ulid>
  root text NOT NULL,
  leaf_count integer NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'confirmed', 'failed')),
  tx text,
  cluster text,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  locked_until timestamptz,
  failure_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  confirmed_at timestamptz
);
CREATE INDEX receipt_batches_due ON receipt_batches (next_attempt_at) WHERE status = 'pending';

CREATE TABLE receipts (
  notification_id text PRIMARY KEY REFERENCES notifications(id) ON DELETE CASCADE,
  protocol_id text NOT NULL,
  leaf text NOT NULL,
  salt text NOT NULL,
  content_hash text NOT NULL,
  batch_id text REFERENCES receipt_batches(id),
  leaf_index integer,
  merkle_path jsonb,
  proof jsonb,
  public_signals jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX receipts_unbatched ON receipts (created_at) WHERE batch_id IS NULL;
CREATE INDEX receipts_batch ON receipts (batch_id);
