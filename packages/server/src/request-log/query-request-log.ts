import type { Queryable } from '../db/connection.js';
import { inSnapshot } from '../db/count-and-page.js';

export interface RequestLogQuery {
  protocolId: string;
  page: number;
  limit: number;
  statusCode?: number;
  endpoint?: string;
}

export interface RequestLogRow {
  method: string;
  endpoint: string;
  status_code: number;
  latency_ms: number;
  created_at: Date;
}

/**
 * One page of a protocol's requests, newest first, and how many match. Each segment's summary
 * tells how many of its requests match, without unnesting it: the total is their sum, and only
 * the newest segments that can hold the page are unnested, those that end no earlier than the
 * earliest start among the fewest latest-ending segments holding enough matching requests (a
 * request of a segment that ends earlier cannot be newer than the page's last). Both reads share
 * one snapshot, so the total counts exactly the requests the page is cut from, even while
 * requests are logged or segments merged between them.
 */
export function queryRequestLog(db: Queryable, q: RequestLogQuery): Promise<{ items: RequestLogRow[]; total: number }> {
  return inSnapshot(db, (snapshot) => readRequestLog(snapshot, q));
}

async function readRequestLog(db: Queryable, q: RequestLogQuery): Promise<{ items: RequestLogRow[]; total: number }> {
  // $1 is the protocol's id; conditions on a request (`r`) hold for its segment's summary pairs too.
  const conditions: string[] = [];
  const params: unknown[] = [q.protocolId];
  if (q.statusCode !== undefined) {
    params.push(q.statusCode);
    conditions.push(`r.status_code = $${params.length}`);
  }
  if (q.endpoint) {
    params.push(`%${q.endpoint.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    conditions.push(`r.endpoint LIKE $${params.length}`);
  }
  const matching = conditions.length
    ? `(SELECT coalesce(sum(r.n), 0) FROM unnest(s.summary_endpoints, s.summary_status_codes, s.summary_counts) AS r(endpoint, status_code, n)
        WHERE ${conditions.join(' AND ')})`
    : 's.entries';
  const needed = params.push(q.page * q.limit);
  const [summary] = await db.query<{ total: number; cutoff: Date | null }>(
    `SELECT coalesce(sum(matching), 0)::int AS total, min(first_at) FILTER (WHERE before < $${needed}) AS cutoff
     FROM (SELECT matching, first_at, sum(matching) OVER (ORDER BY last_at DESC, id DESC) - matching AS before
           FROM (SELECT ${matching} AS matching, s.first_at, s.last_at, s.id
                 FROM request_log_segments s WHERE s.protocol_short_id = (SELECT short_id FROM protocols WHERE id = $1)) counted
           WHERE matching > 0) newest_first`,
    params,
  );
  const offset = (q.page - 1) * q.limit;
  if (offset >= summary.total) return { items: [], total: summary.total };
  params[needed - 1] = summary.cutoff;
  const items = await db.query<RequestLogRow>(
    `SELECT r.method, r.endpoint, r.status_code, r.latency_ms, 'epoch'::timestamptz + r.at * interval '1 millisecond' AS created_at
     FROM request_log_segments s
     CROSS JOIN LATERAL unnest(s.methods, s.endpoints, s.status_codes, s.latencies_ms, s.times_ms)
       WITH ORDINALITY AS r(method, endpoint, status_code, latency_ms, at, position)
     WHERE s.protocol_short_id = (SELECT short_id FROM protocols WHERE id = $1) AND s.last_at >= $${needed}
       ${conditions.map((condition) => `AND ${condition}`).join(' ')}
     ORDER BY r.at DESC, s.id DESC, r.position DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, q.limit, offset],
  );
  return { items, total: summary.total };
}
