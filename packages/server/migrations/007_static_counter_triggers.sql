-- The notification counters of 005, with one trigger function per operation and static SQL.
-- 005 built each statement as text and EXECUTEd it, so PostgreSQL parsed and planned it again on
-- every INSERT and UPDATE of notifications (the send path and every delivery outcome). Static
-- statements in PL/pgSQL see the transition tables too, and their plans are kept per session.

CREATE OR REPLACE FUNCTION herald_count_notification_inserts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  WITH by_hour AS (
    INSERT INTO notification_counts AS c (protocol_id, environment, hour, status, delivery_channel, count)
    SELECT protocol_id, environment, date_trunc('hour', created_at, 'UTC'), status, coalesce(fallback_channel, channel, ''), count(*)
    FROM new_rows GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (protocol_id, environment, hour, status, delivery_channel) DO UPDATE SET count = c.count + EXCLUDED.count
  )
  INSERT INTO broadcast_counts AS b (broadcast_id, status, count)
  SELECT broadcast_id, status, count(*) FROM new_rows WHERE broadcast_id IS NOT NULL
  GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (broadcast_id, status) DO UPDATE SET count = b.count + EXCLUDED.count;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION herald_count_notification_updates() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  WITH changes AS (
    SELECT -1 AS delta, protocol_id, environment, created_at, status, channel, fallback_channel, broadcast_id FROM old_rows
    UNION ALL
    SELECT 1, protocol_id, environment, created_at, status, channel, fallback_channel, broadcast_id FROM new_rows
  ),
  by_hour AS (
    INSERT INTO notification_counts AS c (protocol_id, environment, hour, status, delivery_channel, count)
    SELECT protocol_id, environment, date_trunc('hour', created_at, 'UTC'), status, coalesce(fallback_channel, channel, ''), sum(delta)
    FROM changes GROUP BY 1, 2, 3, 4, 5 HAVING sum(delta) <> 0 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (protocol_id, environment, hour, status, delivery_channel) DO UPDATE SET count = c.count + EXCLUDED.count
  )
  INSERT INTO broadcast_counts AS b (broadcast_id, status, count)
  SELECT broadcast_id, status, sum(delta) FROM changes WHERE broadcast_id IS NOT NULL
  GROUP BY 1, 2 HAVING sum(delta) <> 0 ORDER BY 1, 2
  ON CONFLICT (broadcast_id, status) DO UPDATE SET count = b.count + EXCLUDED.count;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION herald_count_notification_deletes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  WITH by_hour AS (
    INSERT INTO notification_counts AS c (protocol_id, environment, hour, status, delivery_channel, count)
    SELECT protocol_id, environment, date_trunc('hour', created_at, 'UTC'), status, coalesce(fallback_channel, channel, ''), -count(*)
    FROM old_rows GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (protocol_id, environment, hour, status, delivery_channel) DO UPDATE SET count = c.count + EXCLUDED.count
  )
  INSERT INTO broadcast_counts AS b (broadcast_id, status, count)
  SELECT broadcast_id, status, -count(*) FROM old_rows WHERE broadcast_id IS NOT NULL
  GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (broadcast_id, status) DO UPDATE SET count = b.count + EXCLUDED.count;
  -- A deleted notification takes its engagement marks along (a delivered one never changes status).
  WITH gone AS (
    DELETE FROM engaged_notifications g USING old_rows o WHERE g.notification_id = o.id
    RETURNING o.protocol_id, o.environment, o.created_at, g.kind
  )
  INSERT INTO engagement_counts AS c (protocol_id, environment, hour, kind, count)
  SELECT protocol_id, environment, date_trunc('hour', created_at, 'UTC'), kind, -count(*)
  FROM gone GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (protocol_id, environment, hour, kind) DO UPDATE SET count = c.count + EXCLUDED.count;
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS notifications_count_insert ON notifications;
CREATE TRIGGER notifications_count_insert AFTER INSERT ON notifications
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_count_notification_inserts();
DROP TRIGGER IF EXISTS notifications_count_update ON notifications;
CREATE TRIGGER notifications_count_update AFTER UPDATE ON notifications
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_count_notification_updates();
DROP TRIGGER IF EXISTS notifications_count_delete ON notifications;
CREATE TRIGGER notifications_count_delete AFTER DELETE ON notifications
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_count_notification_deletes();

DROP FUNCTION IF EXISTS herald_count_notifications();
