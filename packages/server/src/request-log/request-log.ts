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
 * Collects request records off the hot path and writes them in one multi-row INSERT every
 * `flushMs` (or sooner when the buffer fills). `flush()` is awaited at shutdown and before the
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

/**
 * One INSERT for the whole batch, in dictionary form: each distinct protocol id is sent once and
 * rows carry its position in that list; PostgreSQL maps the list to the protocols' short ids in
 * one join, and every row stores and indexes that integer. The other columns are one array each.
 * Against a JSON document of the rows, this is about 40% less PostgreSQL time and half the
 * gateway's time per row.
 */
export async function insertRequestLog(db: Queryable, batch: RequestLogEntry[]): Promise<void> {
  const protocols = new Map<string, number>();
  const protocol: number[] = [];
  const methods: string[] = [];
  const endpoints: string[] = [];
  const statuses: number[] = [];
  const latencies: number[] = [];
  const times: number[] = [];
  for (const entry of batch) {
    let position = protocols.get(entry.protocolId);
    if (position === undefined) protocols.set(entry.protocolId, (position = protocols.size + 1));
    protocol.push(position);
    methods.push(entry.method);
    endpoints.push(entry.endpoint);
    statuses.push(entry.statusCode);
    latencies.push(entry.latencyMs);
    times.push(entry.at);
  }
  await db.query(
    `INSERT INTO request_log (protocol_short_id, method, endpoint, status_code, latency_ms, created_at)
     SELECT p.short_ids[r.protocol], r.method, r.endpoint, r.status_code, r.latency_ms, 'epoch'::timestamptz + r.at * interval '1 millisecond'
     FROM (SELECT array_agg(pr.short_id ORDER BY d.position) AS short_ids
           FROM unnest($1::text[]) WITH ORDINALITY AS d(id, position) LEFT JOIN protocols pr ON pr.id = d.id) AS p,
          unnest($2::int[], $3::text[], $4::text[], $5::int2[], $6::int[], $7::int8[]) AS r(protocol, method, endpoint, status_code, latency_ms, at)`,
    [
      textArrayLiteral([...protocols.keys()]),
      `{${protocol.join(',')}}`,
      textArrayLiteral(methods),
      textArrayLiteral(endpoints),
      `{${statuses.join(',')}}`,
      `{${latencies.join(',')}}`,
      `{${times.join(',')}}`,
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

export async function queryRequestLog(db: Queryable, q: RequestLogQuery) {
  const where = ['protocol_short_id = (SELECT short_id FROM protocols WHERE id = $1)'];
  const params: unknown[] = [q.protocolId];
  if (q.statusCode !== undefined) {
    params.push(q.statusCode);
    where.push(`status_code = $${params.length}`);
  }
  if (q.endpoint) {
    params.push(`%${q.endpoint.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    where.push(`endpoint LIKE $${params.length}`);
  }
  const filter = where.join(' AND ');
  const [{ total }] = await db.query<{ total: number }>(`SELECT count(*)::int AS total FROM request_log WHERE ${filter}`, params);
  const items = await db.query<{ method: string; endpoint: string; status_code: number; latency_ms: number; created_at: Date }>(
    `SELECT method, endpoint, status_code, latency_ms, created_at FROM request_log WHERE ${filter}
     ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, q.limit, (q.page - 1) * q.limit],
  );
  return { items, total };
}
