import { Writable } from 'node:stream';

/** A log destination that keeps what is written to it, for tests that read a gateway's log. */
export interface LogLines {
  /** Give this to pino (or createLogger) as the destination. */
  stream: Writable;
  /** Each line written, as written. */
  lines: string[];
  /** Each line parsed as the JSON object pino writes. */
  records(): Record<string, any>[];
}

export function logLines(): LogLines {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { stream, lines, records: () => lines.map((line) => JSON.parse(line)) };
}
