import type { Queryable } from '../db/connection.js';
import type { Deps } from '../deps.js';
import { JobLoop } from '../jobs/loop.js';

/** An hour is merged once it ended this long ago: no flush still writes into it. */
const SETTLED_MS = 60 * 60 * 1000;
/** Requests a merged segment holds, about: reading one costs unnesting all of them. */
const MERGED_ENTRIES = 10_000;
/** Protocol-hours merged per statement. */
const HOURS_PER_PASS = 20;
const IDLE_MS = 10 * 60 * 1000;

/**
 * Merges the small segments of each settled hour of a protocol's request log into segments of
 * about MERGED_ENTRIES requests. A gateway writes a segment per protocol per flush, so a protocol
 * sending a few requests a second leaves thousands of small segments an hour, and every read sums
 * or unnests them all. Consecutive small segments (by start, under half that size; larger ones
 * stay as they are) are merged while their requests fit;
 * requests keep their order: by time, then by the segment and position they had. An hour is taken
 * while it has two segments under half that size. Answers how many merged segments were written.
 * Safe to run in several processes at once: segments are deleted and their merge inserted in one
 * statement, and a concurrent pass finds them gone.
 */
export async function compactRequestLog(db: Queryable, now: Date): Promise<number> {
  const [{ merged }] = await db.query<{ merged: number }>(
    `WITH settled AS (
       SELECT date_trunc('hour', $1::timestamptz - $2 * interval '1 millisecond', 'UTC') AS before
     ), hours AS (
       SELECT protocol_short_id, date_trunc('hour', first_at, 'UTC') AS hour
       FROM request_log_segments
       WHERE first_at < (SELECT before FROM settled)
       GROUP BY 1, 2
       HAVING count(*) FILTER (WHERE entries < $3 / 2) > 1 AND max(last_at) < (SELECT before FROM settled) + interval '1 hour'
       LIMIT $4
     ), chunked AS (
       SELECT s.id, h.protocol_short_id, h.hour,
              (sum(s.entries) OVER (PARTITION BY h.protocol_short_id, h.hour ORDER BY s.first_at, s.id) - s.entries) / $3 AS chunk
       FROM request_log_segments s JOIN hours h ON s.protocol_short_id = h.protocol_short_id AND date_trunc('hour', s.first_at, 'UTC') = h.hour
       WHERE s.entries < $3 / 2
     ), merging AS (
       SELECT c.id, c.hour, c.chunk FROM chunked c
       JOIN (SELECT protocol_short_id, hour, chunk FROM chunked GROUP BY 1, 2, 3 HAVING count(*) > 1) m USING (protocol_short_id, hour, chunk)
     ), taken AS (
       DELETE FROM request_log_segments s USING merging m WHERE s.id = m.id
       RETURNING s.*, m.hour, m.chunk
     ), requests AS (
       SELECT t.protocol_short_id, t.hour, t.chunk, t.id, r.*
       FROM taken t CROSS JOIN LATERAL unnest(t.methods, t.endpoints, t.status_codes, t.latencies_ms, t.times_ms)
         WITH ORDINALITY AS r(method, endpoint, status_code, latency_ms, at, position)
     ), pairs AS (
       SELECT protocol_short_id, hour, chunk, array_agg(endpoint) AS endpoints, array_agg(status_code) AS status_codes, array_agg(n) AS counts
       FROM (SELECT protocol_short_id, hour, chunk, endpoint, status_code, count(*)::int AS n FROM requests GROUP BY 1, 2, 3, 4, 5) p
       GROUP BY 1, 2, 3
     ), inserted AS (
       INSERT INTO request_log_segments (protocol_short_id, first_at, last_at, entries, methods, endpoints, status_codes, latencies_ms, times_ms,
                                         summary_endpoints, summary_status_codes, summary_counts)
       SELECT r.protocol_short_id, 'epoch'::timestamptz + min(r.at) * interval '1 millisecond', 'epoch'::timestamptz + max(r.at) * interval '1 millisecond',
              count(*), array_agg(r.method ORDER BY r.at, r.id, r.position), array_agg(r.endpoint ORDER BY r.at, r.id, r.position),
              array_agg(r.status_code ORDER BY r.at, r.id, r.position), array_agg(r.latency_ms ORDER BY r.at, r.id, r.position),
              array_agg(r.at ORDER BY r.at, r.id, r.position), p.endpoints, p.status_codes, p.counts
       FROM requests r JOIN pairs p USING (protocol_short_id, hour, chunk)
       GROUP BY r.protocol_short_id, r.hour, r.chunk, p.endpoints, p.status_codes, p.counts
       RETURNING 1
     )
     SELECT count(*)::int AS merged FROM inserted`,
    [now, SETTLED_MS, MERGED_ENTRIES, HOURS_PER_PASS],
  );
  return merged;
}

/** The worker role's loop merging settled hours of the request log (compactRequestLog). */
export function requestLogCompactor(deps: Deps): JobLoop {
  return new JobLoop({ name: 'request-log-compaction', log: deps.log, idleMs: IDLE_MS, pass: () => compactRequestLog(deps.db, deps.now()) });
}
