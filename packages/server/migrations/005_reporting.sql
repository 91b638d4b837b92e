-- Reports and broadcast counts read small counter tables instead of scanning millions of rows.
-- Statement-level triggers (one aggregate per statement, not per row) keep every counter exact in
-- the transaction of the write that changes it, whichever code makes the write, so a counter can
-- never drift from its rows. Upserts touch counter rows in key order, so two writers never
-- deadlock on them.

-- The rows a statement changed as (delta, <columns>): -1 per old row, +1 per new row. Trigger
-- functions EXECUTE the text, because only the trigger's own statements see its transition tables.
CREATE OR REPLACE FUNCTION herald_transition_deltas(op text, columns text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE op
    WHEN 'INSERT' THEN format('SELECT 1 AS delta, %s FROM new_rows', columns)
    WHEN 'DELETE' THEN format('SELECT -1 AS delta, %s FROM old_rows', columns)
    ELSE format('SELECT -1 AS delta, %1$s FROM old_rows UNION ALL SELECT 1 AS delta, %1$s FROM new_rows', columns)
  END
$$;

-- Notifications per protocol, environment, UTC hour of creation, status and delivery channel (the
-- SMS fallback when one was used, '' when none was chosen): GET /v1/analytics and the delivered
-- emails of GET /v1/engagement.
CREATE TABLE IF NOT EXISTS notification_counts (
  protocol_id text NOT NULL,
  environment text NOT NULL,
  hour timestamptz NOT NULL,
  status text NOT NULL,
  delivery_channel text NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (protocol_id, environment, hour, status, delivery_channel)
);

-- A broadcast's notifications per status: GET /v1/broadcasts/:id.
CREATE TABLE IF NOT EXISTS broadcast_counts (
  broadcast_id text NOT NULL,
  status text NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (broadcast_id, status)
);

CREATE OR REPLACE FUNCTION herald_count_notifications() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format($q$
    WITH changes AS (%s),
    by_hour AS (
      INSERT INTO notification_counts AS c (protocol_id, environment, hour, status, delivery_channel, count)
      SELECT protocol_id, environment, date_trunc('hour', created_at, 'UTC'), status, coalesce(fallback_channel, channel, ''), sum(delta)
      FROM changes GROUP BY 1, 2, 3, 4, 5 HAVING sum(delta) <> 0 ORDER BY 1, 2, 3, 4, 5
      ON CONFLICT (protocol_id, environment, hour, status, delivery_channel) DO UPDATE SET count = c.count + EXCLUDED.count
    )
    INSERT INTO broadcast_counts AS b (broadcast_id, status, count)
    SELECT broadcast_id, status, sum(delta) FROM changes WHERE broadcast_id IS NOT NULL
    GROUP BY 1, 2 HAVING sum(delta) <> 0 ORDER BY 1, 2
    ON CONFLICT (broadcast_id, status) DO UPDATE SET count = b.count + EXCLUDED.count
  $q$, herald_transition_deltas(TG_OP, 'protocol_id, environment, created_at, status, channel, fallback_channel, broadcast_id'));
  -- A deleted notification takes its engagement marks along (a delivered one never changes status).
  IF TG_OP = 'DELETE' THEN
    WITH gone AS (
      DELETE FROM engaged_notifications g USING old_rows o WHERE g.notification_id = o.id
      RETURNING o.protocol_id, o.environment, o.created_at, g.kind
    )
    INSERT INTO engagement_counts AS c (protocol_id, environment, hour, kind, count)
    SELECT protocol_id, environment, date_trunc('hour', created_at, 'UTC'), kind, -count(*)
    FROM gone GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (protocol_id, environment, hour, kind) DO UPDATE SET count = c.count + EXCLUDED.count;
  END IF;
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS notifications_count_insert ON notifications;
CREATE TRIGGER notifications_count_insert AFTER INSERT ON notifications
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_count_notifications();
DROP TRIGGER IF EXISTS notifications_count_update ON notifications;
CREATE TRIGGER notifications_count_update AFTER UPDATE ON notifications
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_count_notifications();
DROP TRIGGER IF EXISTS notifications_count_delete ON notifications;
CREATE TRIGGER notifications_count_delete AFTER DELETE ON notifications
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_count_notifications();

INSERT INTO notification_counts (protocol_id, environment, hour, status, delivery_channel, count)
SELECT protocol_id, environment, date_trunc('hour', created_at, 'UTC'), status, coalesce(fallback_channel, channel, ''), count(*)
FROM notifications GROUP BY 1, 2, 3, 4, 5;
INSERT INTO broadcast_counts (broadcast_id, status, count)
SELECT broadcast_id, status, count(*) FROM notifications WHERE broadcast_id IS NOT NULL GROUP BY 1, 2;

-- Engagement: the first open, click and unsubscribe of each delivered email (as it stands when the
-- event arrives) is marked once; engagement_counts holds the marks per protocol, environment,
-- UTC hour of the email's creation and kind. The primary key makes "first" exact under concurrency.
CREATE TABLE IF NOT EXISTS engaged_notifications (
  notification_id text NOT NULL,
  kind text NOT NULL,
  PRIMARY KEY (notification_id, kind)
);

CREATE TABLE IF NOT EXISTS engagement_counts (
  protocol_id text NOT NULL,
  environment text NOT NULL,
  hour timestamptz NOT NULL,
  kind text NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (protocol_id, environment, hour, kind)
);

CREATE OR REPLACE FUNCTION herald_count_engagement() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  WITH firsts AS (
    INSERT INTO engaged_notifications (notification_id, kind)
    SELECT DISTINCT e.notification_id, e.kind FROM new_rows e
    JOIN notifications n ON n.id = e.notification_id
    WHERE n.status = 'delivered' AND n.channel = 'email' AND n.fallback_channel IS NULL
    ORDER BY 1, 2
    ON CONFLICT DO NOTHING
    RETURNING notification_id, kind
  )
  INSERT INTO engagement_counts AS c (protocol_id, environment, hour, kind, count)
  SELECT n.protocol_id, n.environment, date_trunc('hour', n.created_at, 'UTC'), f.kind, count(*)
  FROM firsts f JOIN notifications n ON n.id = f.notification_id
  GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (protocol_id, environment, hour, kind) DO UPDATE SET count = c.count + EXCLUDED.count;
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS engagement_events_count ON engagement_events;
CREATE TRIGGER engagement_events_count AFTER INSERT ON engagement_events
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_count_engagement();

INSERT INTO engaged_notifications (notification_id, kind)
SELECT DISTINCT e.notification_id, e.kind FROM engagement_events e
JOIN notifications n ON n.id = e.notification_id
WHERE n.status = 'delivered' AND n.channel = 'email' AND n.fallback_channel IS NULL;
INSERT INTO engagement_counts (protocol_id, environment, hour, kind, count)
SELECT n.protocol_id, n.environment, date_trunc('hour', n.created_at, 'UTC'), g.kind, count(*)
FROM engaged_notifications g JOIN notifications n ON n.id = g.notification_id GROUP BY 1, 2, 3, 4;

-- Audience per protocol and UTC day the subscription started. A (subscription, identity) pair
-- counts in `registered` when the wallet ever subscribed (channels not empty: an opt-out of a
-- wallet that never subscribed has none); while subscribed, in each channel it is subscribed to
-- and verified on, and in `broadcastable` when that is at least one. Subscriptions and identities
-- both change the pairs, so both have triggers.
CREATE TABLE IF NOT EXISTS audience_counts (
  protocol_id text NOT NULL,
  day date NOT NULL,
  registered bigint NOT NULL,
  broadcastable bigint NOT NULL,
  email bigint NOT NULL,
  telegram bigint NOT NULL,
  sms bigint NOT NULL,
  PRIMARY KEY (protocol_id, day)
);

-- The upsert for pairs given as (delta, protocol_id, subscribed_at, channels, subscribed, email_ok, telegram_ok, sms_ok).
CREATE OR REPLACE FUNCTION herald_audience_upsert(pairs text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT format($q$
    INSERT INTO audience_counts AS c (protocol_id, day, registered, broadcastable, email, telegram, sms)
    SELECT protocol_id, day, sum(delta * registered), sum(delta * (subscribed AND (e OR t OR s))::int),
           sum(delta * (subscribed AND e)::int), sum(delta * (subscribed AND t)::int), sum(delta * (subscribed AND s)::int)
    FROM (
      SELECT delta, protocol_id, (subscribed_at AT TIME ZONE 'UTC')::date AS day, (cardinality(channels) > 0)::int AS registered, subscribed,
             'email' = ANY(channels) AND email_ok AS e, 'telegram' = ANY(channels) AND telegram_ok AS t, 'sms' = ANY(channels) AND sms_ok AS s
      FROM (%s) pairs
    ) p
    GROUP BY 1, 2
    HAVING sum(delta * registered) <> 0 OR sum(delta * (subscribed AND (e OR t OR s))::int) <> 0
        OR sum(delta * (subscribed AND e)::int) <> 0 OR sum(delta * (subscribed AND t)::int) <> 0 OR sum(delta * (subscribed AND s)::int) <> 0
    ORDER BY 1, 2
    ON CONFLICT (protocol_id, day) DO UPDATE SET
      registered = c.registered + EXCLUDED.registered, broadcastable = c.broadcastable + EXCLUDED.broadcastable,
      email = c.email + EXCLUDED.email, telegram = c.telegram + EXCLUDED.telegram, sms = c.sms + EXCLUDED.sms
  $q$, pairs)
$$;

CREATE OR REPLACE FUNCTION herald_count_audience_subscriptions() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE herald_audience_upsert(format($q$
    SELECT d.delta, d.protocol_id, d.subscribed_at, d.channels, d.subscribed,
           (i.email_enc IS NOT NULL AND i.email_verified_at IS NOT NULL) AS email_ok,
           (i.telegram_chat_enc IS NOT NULL AND i.telegram_linked_at IS NOT NULL) AS telegram_ok,
           (i.phone_enc IS NOT NULL AND i.phone_verified_at IS NOT NULL) AS sms_ok
    FROM (%s) d JOIN identities i ON i.wallet = d.wallet
  $q$, herald_transition_deltas(TG_OP, 'protocol_id, wallet, subscribed_at, channels, subscribed')));
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION herald_count_audience_identities() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE herald_audience_upsert(format($q$
    SELECT d.delta, s.protocol_id, s.subscribed_at, s.channels, s.subscribed, d.email_ok, d.telegram_ok, d.sms_ok
    FROM (%s) d JOIN subscriptions s ON s.wallet = d.wallet
  $q$, herald_transition_deltas(TG_OP,
    'wallet, (email_enc IS NOT NULL AND email_verified_at IS NOT NULL) AS email_ok, '
    '(telegram_chat_enc IS NOT NULL AND telegram_linked_at IS NOT NULL) AS telegram_ok, '
    '(phone_enc IS NOT NULL AND phone_verified_at IS NOT NULL) AS sms_ok')));
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS subscriptions_audience_insert ON subscriptions;
CREATE TRIGGER subscriptions_audience_insert AFTER INSERT ON subscriptions
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_count_audience_subscriptions();
DROP TRIGGER IF EXISTS subscriptions_audience_update ON subscriptions;
CREATE TRIGGER subscriptions_audience_update AFTER UPDATE ON subscriptions
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_count_audience_subscriptions();
DROP TRIGGER IF EXISTS subscriptions_audience_delete ON subscriptions;
CREATE TRIGGER subscriptions_audience_delete AFTER DELETE ON subscriptions
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_count_audience_subscriptions();
DROP TRIGGER IF EXISTS identities_audience_insert ON identities;
CREATE TRIGGER identities_audience_insert AFTER INSERT ON identities
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_count_audience_identities();
DROP TRIGGER IF EXISTS identities_audience_update ON identities;
CREATE TRIGGER identities_audience_update AFTER UPDATE ON identities
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_count_audience_identities();
DROP TRIGGER IF EXISTS identities_audience_delete ON identities;
CREATE TRIGGER identities_audience_delete AFTER DELETE ON identities
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_count_audience_identities();

INSERT INTO audience_counts (protocol_id, day, registered, broadcastable, email, telegram, sms)
SELECT s.protocol_id, (s.subscribed_at AT TIME ZONE 'UTC')::date,
       count(*) FILTER (WHERE cardinality(s.channels) > 0),
       count(*) FILTER (WHERE s.subscribed AND (
         ('email' = ANY(s.channels) AND i.email_enc IS NOT NULL AND i.email_verified_at IS NOT NULL)
         OR ('telegram' = ANY(s.channels) AND i.telegram_chat_enc IS NOT NULL AND i.telegram_linked_at IS NOT NULL)
         OR ('sms' = ANY(s.channels) AND i.phone_enc IS NOT NULL AND i.phone_verified_at IS NOT NULL))),
       count(*) FILTER (WHERE s.subscribed AND 'email' = ANY(s.channels) AND i.email_enc IS NOT NULL AND i.email_verified_at IS NOT NULL),
       count(*) FILTER (WHERE s.subscribed AND 'telegram' = ANY(s.channels) AND i.telegram_chat_enc IS NOT NULL AND i.telegram_linked_at IS NOT NULL),
       count(*) FILTER (WHERE s.subscribed AND 'sms' = ANY(s.channels) AND i.phone_enc IS NOT NULL AND i.phone_verified_at IS NOT NULL)
FROM subscriptions s JOIN identities i ON i.wallet = s.wallet
GROUP BY 1, 2;
