import type { Logger } from 'pino';
import { textArrayLiteral } from '../db/array-literal.js';
import type { Database, Queryable } from '../db/connection.js';

export interface RequestLogEntry {
  protocolId: string;
  method: string;
  endpoint: string;
  statusCode: number;
  latencyMs: number;
  /** When it was answered, in Unix milliseconds. */
  at: number;
}

const MAX_BUFFER = 5000;

/** One protocol's share of a batch: the columns of its requests, in the order recorded. */
interface Segment {
  methods: string[];
  endpoints: string[];
  statuses: number[];
  latencies: number[];
  times: number[];
  first: number;
  last: number;
}

/** Requests gathered for one write, already split by protocol into segments. */
class SegmentBatch {
  readonly segments = new Map<string, Segment>();
  size = 0;

  add(protocolId: string, method: string, endpoint: string, statusCode: number, latencyMs: number, at: number): void {
    let segment = this.segments.get(protocolId);
    if (!segment) {
      segment = { methods: [], endpoints: [], statuses: [], latencies: [], times: [], first: at, last: at };
      this.segments.set(protocolId, segment);
    }
    segment.methods.push(method);
    segment.endpoints.push(endpoint);
    segment.statuses.push(statusCode);
    segment.latencies.push(latencyMs);
    segment.times.push(at);
    if (at < segment.first) segment.first = at;
    if (at > segment.last) segment.last = at;
    this.size++;
  }
}

/**
 * Collects request records off the hot path, split by protocol as they come, and writes them in
 * one INSERT, a segment per protocol, every `flushMs` (or sooner when the buffer fills).
 * `flush()` is awaited at shutdown and before the log is read, so a single process always shows
 * its own requests.
 */
export class RequestLog {
  private batch = new SegmentBatch();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Database,
    private readonly flushMs: number,
    private readonly log: Logger,
  ) {}

  /** Positional rather than an object: this runs for every authenticated request. */
  record(protocolId: string, method: string, endpoint: string, statusCode: number, latencyMs: number, at: number): void {
    this.batch.add(protocolId, method, endpoint, statusCode, latencyMs, at);
    if (this.batch.size >= MAX_BUFFER) void this.flush();
    else if (!this.timer) this.timer = setTimeout(() => void this.flush(), this.flushMs);
  }

  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const batch = this.batch;
    this.batch = new SegmentBatch();
    this.flushing = this.flushing.then(() => (batch.size ? this.write(batch) : undefined));
    return this.flushing;
  }

  private async write(batch: SegmentBatch): Promise<void> {
    try {
      await writeSegments(this.db, batch);
    } catch (error) {
      // The log is best-effort: losing a batch while the database is down must not fail requests.
      this.log.warn({ err: error, dropped: batch.size }, 'request log: could not write a batch');
    }
  }
}

/** Writes entries as the gateway would have recorded them (one segment per protocol). */
export async function insertRequestLog(db: Queryable, entries: RequestLogEntry[]): Promise<void> {
  const batch = new SegmentBatch();
  for (const e of entries) batch.add(e.protocolId, e.method, e.endpoint, e.statusCode, e.latencyMs, e.at);
  if (batch.size) await writeSegments(db, batch);
}

/** Requests per distinct status code and endpoint of a segment. */
function summarise(segment: Segment): { endpoints: string[]; statuses: number[]; counts: number[] } {
  const counts = new Map<string, number>();
  for (let i = 0; i < segment.endpoints.length; i++) {
    const pair = `${segment.statuses[i]} ${segment.endpoints[i]}`;
    counts.set(pair, (counts.get(pair) ?? 0) + 1);
  }
  const summary = { endpoints: [] as string[], statuses: [] as number[], counts: [...counts.values()] };
  for (const pair of counts.keys()) {
    const space = pair.indexOf(' ');
    summary.statuses.push(Number(pair.slice(0, space)));
    summary.endpoints.push(pair.slice(space + 1));
  }
  return summary;
}

/**
 * Writes a batch as one segment per protocol (migrations/015_request_log_segments.sql), in one
 * INSERT: each array parameter has an element per segment, that element being the literal of the
 * segment's own array. Segments of protocols that do not exist are dropped.
 */
async function writeSegments(db: Queryable, batch: SegmentBatch): Promise<void> {
  const all = [...batch.segments.values()];
  const summaries = all.map(summarise);
  const texts = (columns: string[][]) => textArrayLiteral(columns.map((column) => textArrayLiteral(column)));
  const numbers = (columns: number[][]) => textArrayLiteral(columns.map((column) => `{${column.join(',')}}`));
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
      textArrayLiteral([...batch.segments.keys()]),
      `{${all.map((segment) => segment.first).join(',')}}`,
      `{${all.map((segment) => segment.last).join(',')}}`,
      texts(all.map((segment) => segment.methods)),
      texts(all.map((segment) => segment.endpoints)),
      numbers(all.map((segment) => segment.statuses)),
      numbers(all.map((segment) => segment.latencies)),
      numbers(all.map((segment) => segment.times)),
      texts(summaries.map((summary) => summary.endpoints)),
      numbers(summaries.map((summary) => summary.statuses)),
      numbers(summaries.map((summary) => summary.counts)),
    ],
  );
}
