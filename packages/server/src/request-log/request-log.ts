import type { Logger } from 'pino';
import { textArrayLiteral } from '../db/array-literal.js';
import type { Database, Queryable } from '../db/connection.js';

export interface RequestLogEntry {
  protocolId: string;
  method: string;
  endpoint: string;
  statusCode: number;
  latencyMs: number;
  /** When it was answered, in Unix milliseconds (a number serialises several times faster than a Date). */
  at: number;
}

const MAX_BUFFER = 5000;

/**
 * Collects request records off the hot path and writes them in one INSERT, a segment per
 * protocol, every `flushMs` (or sooner when the buffer fills). `flush()` is awaited at shutdown and before the
 * log is read, so a single process always shows its own requests.
 */
export class RequestLog {
  private buffer: RequestLogEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Database,
    private readonly flushMs: number,
    private readonly log: Logger,
  ) {}

  record(entry: RequestLogEntry): void {
    this.buffer.push(entry);
    if (this.buffer.length >= MAX_BUFFER) void this.flush();
    else if (!this.timer) this.timer = setTimeout(() => void this.flush(), this.flushMs);
  }

  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const batch = this.buffer;
    this.buffer = [];
    this.flushing = this.flushing.then(() => (batch.length ? this.write(batch) : undefined));
    return this.flushing;
  }

  private async write(batch: RequestLogEntry[]): Promise<void> {
    try {
      await insertRequestLog(this.db, batch);
    } catch (error) {
      // The log is best-effort: losing a batch while the database is down must not fail requests.
      this.log.warn({ err: error, dropped: batch.length }, 'request log: could not write a batch');
    }
  }
}

/** One protocol's share of a batch: the columns of its requests, in order, and their summary. */
interface Segment {
  methods: string[];
  endpoints: string[];
  statuses: number[];
  latencies: number[];
  times: number[];
  first: number;
  last: number;
  /** Requests per distinct endpoint and status code, keyed `<status> <endpoint>`. */
  summary: Map<string, number>;
}

/**
 * Writes a batch as one segment per protocol (migrations/015_request_log_segments.sql), in one
 * INSERT: each array parameter has an element per segment, that element being the literal of the
 * segment's own array. Segments of protocols that do not exist are dropped.
 */
export async function insertRequestLog(db: Queryable, batch: RequestLogEntry[]): Promise<void> {
  const segments = new Map<string, Segment>();
  for (const entry of batch) {
    let segment = segments.get(entry.protocolId);
    if (!segment) {
      segment = { methods: [], endpoints: [], statuses: [], latencies: [], times: [], first: entry.at, last: entry.at, summary: new Map() };
      segments.set(entry.protocolId, segment);
    }
    segment.methods.push(entry.method);
    segment.endpoints.push(entry.endpoint);
    segment.statuses.push(entry.statusCode);
    segment.latencies.push(entry.latencyMs);
    segment.times.push(entry.at);
    if (entry.at < segment.first) segment.first = entry.at;
    if (entry.at > segment.last) segment.last = entry.at;
    const pair = `${entry.statusCode} ${entry.endpoint}`;
    segment.summary.set(pair, (segment.summary.get(pair) ?? 0) + 1);
  }
  const all = [...segments.values()];
  const nested = (each: (segment: Segment) => string) => textArrayLiteral(all.map(each));
  const texts = (pick: (segment: Segment) => string[]) => nested((segment) => textArrayLiteral(pick(segment)));
  const numbers = (pick: (segment: Segment) => number[]) => nested((segment) => `{${pick(segment).join(',')}}`);
  const pairs = all.map((segment) => [...segment.summary.keys()]);
  await db.query(
    `INSERT INTO request_log_segments (protocol_short_id, first_at, last_at, entries, methods, endpoints, status_codes, latencies_ms, times_ms,
                                       summary_endpoints, summary_status_codes, summary_counts)
     SELECT p.short_id, 'epoch'::timestamptz + s.first * interval '1 millisecond', 'epoch'::timestamptz + s.last * interval '1 millisecond',
            cardinality(s.times_ms::bigint[]), s.methods::text[], s.endpoints::text[], s.status_codes::smallint[], s.latencies_ms::integer[],
            s.times_ms::bigint[], s.summary_endpoints::text[], s.summary_status_codes::smallint[], s.summary_counts::integer[]
     FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
          AS s(protocol_id, first, last, methods, endpoints, status_codes, latencies_ms, times_ms, summary_endpoints, summary_status_codes, summary_counts)
     JOIN protocols p ON p.id = s.protocol_id`,
    [
      textArrayLiteral([...segments.keys()]),
      `{${all.map((segment) => segment.first).join(',')}}`,
      `{${all.map((segment) => segment.last).join(',')}}`,
      texts((segment) => segment.methods),
      texts((segment) => segment.endpoints),
      numbers((segment) => segment.statuses),
      numbers((segment) => segment.latencies),
      numbers((segment) => segment.times),
      textArrayLiteral(pairs.map((keys) => textArrayLiteral(keys.map((key) => key.slice(key.indexOf(' ') + 1))))),
      textArrayLiteral(pairs.map((keys) => `{${keys.map((key) => key.slice(0, key.indexOf(' '))).join(',')}}`)),
      numbers((segment) => [...segment.summary.values()]),
    ],
  );
}

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
 * request of a segment that ends earlier cannot be newer than the page's last).
 */
export async function queryRequestLog(db: Queryable, q: RequestLogQuery): Promise<{ items: RequestLogRow[]; total: number }> {
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
