import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { shapeProblem } from './answer-shape.js';

describe('shapeProblem', () => {
  it('takes an answer with the members named, of their kinds, whatever else it holds', () => {
    assert.equal(shapeProblem({ data: [{ id: 'a' }], total: 1, page: 1 }, { data: 'objects', total: 'number' }), undefined);
    assert.equal(shapeProblem({ status: 'ok', channels: { email: 'smtp' } }, { status: 'string', channels: 'object' }), undefined);
    assert.equal(shapeProblem({ registered: false, channels: [] }, { registered: 'boolean', channels: 'array' }), undefined);
    assert.equal(shapeProblem([], 'objects'), undefined);
    assert.equal(shapeProblem([{ id: 'wh_1' }], 'objects'), undefined);
  });

  it('names what is missing or of another kind', () => {
    assert.equal(shapeProblem({}, { status: 'string', channels: 'object' }), '"status" is missing');
    assert.equal(shapeProblem({ status: 'ok', channels: 'smtp' }, { status: 'string', channels: 'object' }), '"channels" is not an object');
    assert.equal(shapeProblem({ data: [1, 2], total: 2 }, { data: 'objects', total: 'number' }), '"data" is not an array of objects');
    assert.equal(shapeProblem({ channels: null }, { channels: 'array' }), '"channels" is not an array');
    assert.equal(shapeProblem({ cancelled: 'yes' }, { cancelled: 'boolean' }), '"cancelled" is not true or false');
  });

  it('refuses an array for an object and anything but an array of objects for a bare list', () => {
    assert.equal(shapeProblem([1, 2], { id: 'string' }), 'it is not an object');
    assert.equal(shapeProblem('text', { id: 'string' }), 'it is not an object');
    assert.equal(shapeProblem(null, { id: 'string' }), 'it is not an object');
    assert.equal(shapeProblem([1, 2], 'objects'), 'it is not an array of objects');
    assert.equal(shapeProblem({}, 'objects'), 'it is not an array of objects');
  });
});
