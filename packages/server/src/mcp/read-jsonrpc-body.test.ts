import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readJsonRpcBody } from './read-jsonrpc-body.js';

function errorOf(raw: Buffer | string | undefined) {
  const result = readJsonRpcBody(raw);
  assert.ok('error' in result && !Array.isArray(result.error), `expected one error for ${raw}`);
  return result.error;
}

describe('readJsonRpcBody', () => {
  it('answers -32700 for malformed JSON and for an empty body', () => {
    for (const raw of ['{"jsonrpc": "2.0",', 'not json', '', undefined, Buffer.alloc(0), Buffer.from([0x7b, 0xff, 0x7d])]) {
      const error = errorOf(raw);
      assert.equal(error.error.code, -32700);
      assert.equal(error.id, null);
      assert.equal(error.jsonrpc, '2.0');
    }
  });

  it('answers -32600 for JSON that is not a JSON-RPC message, echoing a usable id', () => {
    const cases: [unknown, string | number | null][] = [
      [{}, null],
      [42, null],
      ['text', null],
      [null, null],
      [{ jsonrpc: '1.0', id: 3, method: 'ping' }, 3],
      [{ jsonrpc: '2.0', id: 'a', method: 12 }, 'a'],
      [{ jsonrpc: '2.0', id: { nested: true }, method: 'ping' }, null],
      [{ jsonrpc: '2.0', id: 4, method: 'tools/list', params: [1, 2] }, 4],
    ];
    for (const [value, id] of cases) {
      const error = errorOf(JSON.stringify(value));
      assert.equal(error.error.code, -32600, JSON.stringify(value));
      assert.equal(error.id, id, JSON.stringify(value));
    }
  });

  it('answers an integer id too large for a JSON number to carry exactly with id null, never with the digits it lost', () => {
    for (const raw of ['{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}', '{"jsonrpc":"2.0","id":-9223372036854775807,"method":"ping"}']) {
      const error = errorOf(raw);
      assert.equal(error.error.code, -32600);
      assert.equal(error.id, null);
      assert.match(error.error.message, /beyond ±9007199254740991.*send it as a string/);
    }
    const batch = readJsonRpcBody('[{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"},{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}]');
    assert.ok('members' in batch);
    assert.deepEqual(
      batch.members.map((member) => ('invalid' in member ? member.invalid.id : (member.message as { id: number }).id)),
      [null, 9007199254740991],
    );
  });

  it('answers -32600 for an empty batch', () => {
    assert.equal(errorOf('[]').error.code, -32600);
  });

  it("judges a batch's members one by one: the valid ones are served, each invalid one answered -32600", () => {
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    assert.deepEqual(readJsonRpcBody(JSON.stringify([{ id: 2 }, ping, 7])), {
      members: [
        { invalid: { jsonrpc: '2.0', id: 2, error: { code: -32600, message: (readJsonRpcBody('{"id":2}') as { error: { error: { message: string } } }).error.error.message } } },
        { message: ping },
        { invalid: { jsonrpc: '2.0', id: null, error: { code: -32600, message: (readJsonRpcBody('7') as { error: { error: { message: string } } }).error.error.message } } },
      ],
      batch: true,
    });
    const allInvalid = readJsonRpcBody(JSON.stringify([1, { foo: 1 }]));
    assert.ok('error' in allInvalid && Array.isArray(allInvalid.error));
    assert.deepEqual(allInvalid.error.map((e) => [e.id, e.error.code]), [[null, -32600], [null, -32600]]);
  });

  it('passes requests, notifications and batches through', () => {
    const request = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    const notification = { jsonrpc: '2.0', method: 'notifications/initialized' };
    assert.deepEqual(readJsonRpcBody(JSON.stringify(request)), { members: [{ message: request }], batch: false });
    assert.deepEqual(readJsonRpcBody(JSON.stringify(notification)), { members: [{ message: notification }], batch: false });
    assert.deepEqual(readJsonRpcBody(JSON.stringify([request, notification])), { members: [{ message: request }, { message: notification }], batch: true });
  });
});
