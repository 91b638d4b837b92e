import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import pino from 'pino';
import { RequestLogger, requestIdGenerator } from './request-logger.js';

function capture(level = 'info') {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const parent = pino({ level, redact: ['*.secret'] }, stream);
  let children = 0;
  const child = parent.child.bind(parent);
  parent.child = ((...args: Parameters<typeof child>) => {
    children++;
    return child(...args);
  }) as typeof parent.child;
  return { parent, lines, children: () => children };
}

describe('RequestLogger', () => {
  it('builds no child logger for a request that logs nothing, or only below the level', () => {
    const { parent, lines, children } = capture('warn');
    const log = new RequestLogger(parent, { reqId: 'r1' }, {});
    log.info('hidden');
    log.debug({ a: 1 }, 'hidden too');
    assert.equal(children(), 0);
    assert.equal(lines.length, 0);
    assert.equal(log.level, 'warn');
  });

  it('logs with the request binding, redaction included, through one child built on first use', async () => {
    const { parent, lines, children } = capture();
    const log = new RequestLogger(parent, { reqId: 'r2' }, {});
    log.error({ err: new Error('boom'), extra: { secret: 'hunter2' } }, 'failed');
    log.info('second line');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(children(), 1);
    assert.deepEqual(
      lines.map((l) => [l.reqId, l.msg]),
      [
        ['r2', 'failed'],
        ['r2', 'second line'],
      ],
    );
    assert.equal((lines[0].extra as { secret: string }).secret, '[Redacted]');
    assert.equal((lines[0].err as { message: string }).message, 'boom');
  });

  it('honours a per-route level given in the child options', () => {
    const { parent, lines } = capture('warn');
    const log = new RequestLogger(parent, { reqId: 'r3' }, { level: 'debug' });
    log.debug('shown');
    assert.equal(lines.length, 1);
    assert.equal(log.level, 'debug');
  });
});

describe('requestIdGenerator', () => {
  it('keeps a short token the client sent and refuses anything else', () => {
    const next = requestIdGenerator();
    assert.equal(next('abc-123.x_Y'), 'abc-123.x_Y');
    for (const bad of ['../etc', 'x'.repeat(65), '', 'a b', undefined, ['a']]) assert.notEqual(next(bad), bad);
  });

  it('makes ids unique within a process and across processes', () => {
    const a = requestIdGenerator();
    const b = requestIdGenerator();
    const ids = new Set([...Array.from({ length: 1000 }, () => a(undefined)), ...Array.from({ length: 1000 }, () => b(undefined))]);
    assert.equal(ids.size, 2000);
  });
});
