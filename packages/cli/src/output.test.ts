import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Output, maskKey, wantsColour } from './output.js';

const tty = { write: () => true, isTTY: true };
const pipe = { write: () => true, isTTY: false };

describe('wantsColour', () => {
  it('colours a terminal only', () => {
    assert.equal(wantsColour(false, {}, tty), true);
    assert.equal(wantsColour(false, {}, pipe), false);
    assert.equal(wantsColour(false, { TERM: 'dumb' }, tty), false);
  });
  it('never with --json or NO_COLOR, whatever else is set', () => {
    assert.equal(wantsColour(true, { FORCE_COLOR: '1' }, tty), false);
    assert.equal(wantsColour(false, { NO_COLOR: '1', FORCE_COLOR: '1' }, tty), false);
  });
  it('ignores an empty NO_COLOR (no-color.org) and honours FORCE_COLOR on a pipe', () => {
    assert.equal(wantsColour(false, { NO_COLOR: '' }, tty), true);
    assert.equal(wantsColour(false, { FORCE_COLOR: '1' }, pipe), true);
    assert.equal(wantsColour(false, { FORCE_COLOR: '0' }, pipe), false);
  });
  it('never when FORCE_COLOR is 0 or false, even on a terminal (as Node and chalk read it)', () => {
    assert.equal(wantsColour(false, { FORCE_COLOR: '0' }, tty), false);
    assert.equal(wantsColour(false, { FORCE_COLOR: 'false' }, tty), false);
    assert.equal(wantsColour(false, { FORCE_COLOR: '' }, pipe), true);
  });
});

describe('maskKey', () => {
  it('keeps the environment and the prefix the gateway lists, hides the rest', () => {
    assert.equal(maskKey('hrld_live_abYDJylrT3oX68BjQ1f3FFyzQpj2ZSe5GWlIYi76'), 'hrld_live_abYD…');
    assert.equal(maskKey('hrld_test_9JPvIalmvPnYs5Z6nza4AfvXfCqjtoDmc4SMhmb1'), 'hrld_test_9JPv…');
  });
  it('shows at most four characters of a short or foreign key', () => {
    assert.equal(maskKey('hrld_live_short'), 'hrld_live_…');
    assert.equal(maskKey('sk_live_0123456789abcdef'), 'sk_l…');
  });
});

describe('Output', () => {
  function capture(json: boolean, colour = false) {
    const out = { text: '', write: (t: string) => (out.text += t) };
    const err = { text: '', write: (t: string) => (err.text += t) };
    return { output: new Output(json, colour, out, err), out, err };
  }

  it('prints only the JSON document in --json mode', () => {
    const { output, out, err } = capture(true);
    output.line('hello');
    output.note('hint');
    output.result({ a: 1 }, () => output.line('human'));
    assert.deepEqual(JSON.parse(out.text), { a: 1 });
    assert.equal(err.text, '');
  });

  it('pads table columns by visible width, colour codes excluded', () => {
    const { output, out } = capture(false, true);
    output.table(['A', 'B'], [[output.style.red('x'), 'y'], ['long', 'z']]);
    const lines = out.text.replace(/\x1b\[\d+m/g, '').split('\n');
    assert.deepEqual(lines.slice(0, 3), ['A     B', 'x     y', 'long  z']);
  });
});
