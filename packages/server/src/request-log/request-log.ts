import type { Logger } from 'pino';
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
 * One INSERT for the whole batch, sent as a single JSON parameter: serialising the entries is one
 * native JSON.stringify, where per-column arrays cost the driver several times as much per row.
 */
export async function insertRequestLog(db: Queryable, batch: RequestLogEntry[]): Promise<void> {
  await db.query(
    `INSERT INTO request_log (protocol_id, method, endpoint, status_code, latency_ms, created_at)
     SELECT "protocolId", method, endpoint, "statusCode", "latencyMs", 'epoch'::timestamptz + at * interval '1 millisecond'
     FROM json_to_recordset($1::json) AS r("protocolId" text, method text, endpoint text, "statusCode" smallint, "latencyMs" int, at bigint)`,
    [JSON.stringify(batch)],
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
  const where = ['protocol_id = $1'];
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
