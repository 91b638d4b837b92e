import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { logLines } from '../../../test/support/log-lines.js';
import { serializeError } from './serialize-error.js';

describe('serializeError', () => {
  it('serializes a frozen error, which pino alone throws on, by name, message, code and stack', () => {
    const frozen = Object.freeze(Object.assign(new TypeError('HTTP error (404): Not Found'), { code: 8100002 }));
    assert.throws(() => pino.stdSerializers.err(frozen), /not extensible/);
    const out = serializeError(frozen) as Record<string, unknown>;
    assert.deepEqual([out.type, out.message, out.code], ['TypeError', 'HTTP error (404): Not Found', 8100002]);
    assert.match(String(out.stack), /^TypeError: HTTP error \(404\)/);
  });

  it('leaves ordinary errors to pino, and a logger using it does not throw', () => {
    const plain = Object.assign(new Error('boom'), { detail: 'x' });
    assert.deepEqual(serializeError(plain), pino.stdSerializers.err(plain));
    const written = logLines();
    const log = pino({ serializers: { err: serializeError } }, written.stream);
    log.warn({ err: Object.freeze(new Error('frozen')) }, 'write failed');
    assert.equal(written.records()[0].err.message, 'frozen');
  });
});
