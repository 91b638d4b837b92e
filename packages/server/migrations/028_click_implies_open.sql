-- A followed link implies an open: a reader whose mail client blocks images (no open pixel) but who
-- clicks a link has opened the email, as email tools count it. The first click of a delivered email
-- marks its open too when the pixel has not; emails clicked before this migration are marked now.
CREATE OR REPLACE FUNCTION herald_count_engagement() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  WITH firsts AS (
    INSERT INTO engaged_notifications (notification_id, kind)
    SELECT DISTINCT e.notification_id, k.kind FROM new_rows e
    CROSS JOIN LATERAL (VALUES (e.kind), (CASE WHEN e.kind = 'click' THEN 'open' END)) AS k(kind)
    JOIN notifications n ON n.id = e.notification_id
    WHERE k.kind IS NOT NULL AND n.status = 'delivered' AND n.channel = 'email' AND n.fallback_channel IS NULL
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

WITH opened AS (
  INSERT INTO engaged_notifications (notification_id, kind)
  SELECT notification_id, 'open' FROM engaged_notifications WHERE kind = 'click'
  ORDER BY 1
  ON CONFLICT DO NOTHING
  RETURNING notification_id, kind
)
INSERT INTO engagement_counts AS c (protocol_id, environment, hour, kind, count)
SELECT n.protocol_id, n.environment, date_trunc('hour', n.created_at, 'UTC'), o.kind, count(*)
FROM opened o JOIN notifications n ON n.id = o.notification_id
GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
ON CONFLICT (protocol_id, environment, hour, kind) DO UPDATE SET count = c.count + EXCLUDED.count;
