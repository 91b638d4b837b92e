-- The request log is stored in segments: one row per protocol per flush of a gateway process,
-- holding that flush's requests of the protocol as parallel arrays, and a summary of them: each
-- distinct (endpoint, status code) with its number of requests. Written one row per request, the
-- log cost PostgreSQL a heap tuple, an index entry and their WAL for every authenticated request,
-- more than everything else a cheap request costs it; a segment carries a flush's worth of a
-- protocol's requests for the cost of about one row (a third of the PostgreSQL time per request at
-- 10 requests a segment). Reads (request-log/query-request-log.ts) count from the summaries and unnest
-- only the newest segments a page needs, found through (protocol_short_id, last_at).
CREATE TABLE IF NOT EXISTS request_log_segments (
  id bigint GENERATED ALWAYS AS IDENTITY,          -- orders requests of the same millisecond
  protocol_short_id integer NOT NULL,
  first_at timestamptz NOT NULL,                   -- of the segment's earliest request
  last_at timestamptz NOT NULL,                    -- of its latest
  entries integer NOT NULL,
  methods text[] NOT NULL,
  endpoints text[] NOT NULL,
  status_codes smallint[] NOT NULL,
  latencies_ms integer[] NOT NULL,
  times_ms bigint[] NOT NULL,                      -- Unix milliseconds
  summary_endpoints text[] NOT NULL,
  summary_status_codes smallint[] NOT NULL,
  summary_counts integer[] NOT NULL
);
CREATE INDEX IF NOT EXISTS request_log_segments_protocol_last ON request_log_segments (protocol_short_id, last_at DESC);

-- The table's rows become one segment per protocol and hour, in their order.
INSERT INTO request_log_segments (protocol_short_id, first_at, last_at, entries, methods, endpoints, status_codes, latencies_ms, times_ms,
                                  summary_endpoints, summary_status_codes, summary_counts)
WITH hours AS (
  SELECT protocol_short_id, date_trunc('hour', created_at, 'UTC') AS hour, min(created_at) AS first_at, max(created_at) AS last_at, count(*) AS entries,
         array_agg(method ORDER BY created_at, id) AS methods,
         array_agg(endpoint ORDER BY created_at, id) AS endpoints,
         array_agg(status_code ORDER BY created_at, id) AS status_codes,
         array_agg(latency_ms ORDER BY created_at, id) AS latencies_ms,
         array_agg(round(extract(epoch FROM created_at) * 1000)::bigint ORDER BY created_at, id) AS times_ms
  FROM request_log GROUP BY 1, 2
), pairs AS (
  SELECT protocol_short_id, date_trunc('hour', created_at, 'UTC') AS hour, endpoint, status_code, count(*)::int AS n
  FROM request_log GROUP BY 1, 2, 3, 4
), summaries AS (
  SELECT protocol_short_id, hour, array_agg(endpoint) AS endpoints, array_agg(status_code) AS status_codes, array_agg(n) AS counts
  FROM pairs GROUP BY 1, 2
)
SELECT h.protocol_short_id, h.first_at, h.last_at, h.entries, h.methods, h.endpoints, h.status_codes, h.latencies_ms, h.times_ms,
       s.endpoints, s.status_codes, s.counts
FROM hours h JOIN summaries s USING (protocol_short_id, hour)
ORDER BY h.first_at;
DROP TABLE request_log;

-- One row per request, for reading by hand.
CREATE VIEW request_log AS
SELECT s.protocol_short_id, e.method, e.endpoint, e.status_code, e.latency_ms,
       'epoch'::timestamptz + e.at * interval '1 millisecond' AS created_at,
       s.id AS segment_id, e.position
FROM request_log_segments s
CROSS JOIN LATERAL unnest(s.methods, s.endpoints, s.status_codes, s.latencies_ms, s.times_ms)
  WITH ORDINALITY AS e(method, endpoint, status_code, latency_ms, at, position);
