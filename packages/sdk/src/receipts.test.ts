import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import bs58 from 'bs58';
import { base58Decode, poseidon2, ulidValue, verifyReceipt, type Groth16Verifier, type Receipt } from './receipts.js';

const P = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

describe('receipt primitives', () => {
  let reference: (inputs: bigint[]) => bigint;
  before(async () => {
    // circomlibjs is the implementation the circuit's constants come from.
    const { buildPoseidon } = (await import('circomlibjs' as string)) as { buildPoseidon(): Promise<any> };
    const poseidon = await buildPoseidon();
    reference = (inputs) => poseidon.F.toObject(poseidon(inputs));
  });

  it('computes Poseidon(2) exactly as circomlib', () => {
    const cases: [bigint, bigint][] = [
      [0n, 0n],
      [1n, 2n],
      [P - 1n, P - 2n],
      ...Array.from({ length: 5 }, () => [BigInt('0x' + randomBytes(31).toString('hex')), BigInt('0x' + randomBytes(31).toString('hex'))] as [bigint, bigint]),
    ];
    for (const [a, b] of cases) assert.equal(poseidon2(a, b), reference([a, b]), `${a}, ${b}`);
    // The published test vector of circomlib's Poseidon([1, 2]).
    assert.equal(poseidon2(1n, 2n), 7853200120776062878684798364095072458815029376092732009249414926327459813530n);
  });

  it('decodes base58 like bs58 and refuses other characters', () => {
    for (const bytes of [new Uint8Array(32), new Uint8Array([0, 0, 1, 2]), randomBytes(32), randomBytes(64)]) {
      assert.deepEqual(base58Decode(bs58.encode(bytes)), Uint8Array.from(bytes));
    }
    assert.deepEqual(base58Decode(''), new Uint8Array());
    assert.equal(base58Decode('0OIl'), undefined);
  });

  it('reads a notification id as its 128-bit integer', () => {
    assert.equal(ulidValue('0000000000000000000000000Z'), 31n);
    assert.equal(ulidValue('7ZZZZZZZZZZZZZZZZZZZZZZZZZ'), 2n ** 128n - 1n);
    assert.equal(ulidValue('8ZZZZZZZZZZZZZZZZZZZZZZZZZ'), undefined);
    assert.equal(ulidValue(42), undefined);
  });
});

/** A receipt whose tree is built here; the proof is a placeholder judged by an injected verifier. */
function handmadeReceipt(): Receipt {
  const key = Uint8Array.from({ length: 32 }, (_, i) => 200 - i);
  const hex = Buffer.from(key).toString('hex');
  const id = '01J9ZQ3XK8V7N2M4P6R8T0W2Y4';
  const commitment = 123456789n;
  const leafIndex = 5;
  const path = Array.from({ length: 10 }, (_, d) => BigInt(d * 1000 + 7));
  let node = commitment;
  path.forEach((sibling, d) => {
    node = (leafIndex >> d) & 1 ? poseidon2(sibling, node) : poseidon2(node, sibling);
  });
  const h = (v: bigint) => '0x' + v.toString(16).padStart(64, '0');
  return {
    notificationId: id,
    wallet: bs58.encode(key),
    status: 'confirmed',
    commitment: h(commitment),
    root: h(node),
    leafIndex,
    merklePath: path.map(h),
    proof: { pi_a: ['1', '2', '1'], pi_b: [['1', '2'], ['3', '4'], ['1', '0']], pi_c: ['1', '2', '1'], protocol: 'groth16', curve: 'bn128' },
    publicSignals: [commitment.toString(), node.toString(), ulidValue(id)!.toString(), BigInt('0x' + hex.slice(0, 32)).toString(), BigInt('0x' + hex.slice(32)).toString()],
    tx: '5'.repeat(64),
    cluster: 'litesvm',
    signer: bs58.encode(new Uint8Array(32).fill(9)),
    batchId: 'rbat_01J9ZQ3XK8V7N2M4P6R8T0W2Y4',
    memo: `herald:receipt:v1:rbat_01J9ZQ3XK8V7N2M4P6R8T0W2Y4:${h(node)}`,
    confirmedAt: '2026-01-01T00:00:00.000Z',
    verificationKey: { protocol: 'groth16' },
  };
}

const accepting: Groth16Verifier = { verify: async () => true };
const rejecting: Groth16Verifier = { verify: async () => false };
const throwing: Groth16Verifier = { verify: async () => Promise.reject(new Error('malformed point')) };

describe('verifyReceipt (checks besides the pairing)', () => {
  it('passes a consistent receipt offline and says the chain was not consulted', async () => {
    const result = await verifyReceipt(handmadeReceipt(), { groth16: accepting });
    assert.deepEqual(result, { valid: true, checks: { proof: true, publicSignals: true, merklePath: true, onChain: null, signer: null }, errors: [] });
  });

  it('hands the pinned verification key, the public signals and the proof to the verifier', async () => {
    const receipt = handmadeReceipt();
    const pinned = { protocol: 'groth16', pinned: true };
    let seen: unknown[] = [];
    await verifyReceipt(receipt, { groth16: { verify: async (...args) => ((seen = args), true) }, verificationKey: pinned });
    assert.deepEqual(seen, [pinned, receipt.publicSignals, receipt.proof]);
  });

  it('fails when the proof does not verify or the verifier throws', async () => {
    for (const groth16 of [rejecting, throwing]) {
      const result = await verifyReceipt(handmadeReceipt(), { groth16 });
      assert.equal(result.valid, false);
      assert.equal(result.checks.proof, false);
      assert.match(result.errors.join(), /Groth16 proof/);
    }
  });

  it('fails a receipt claiming another wallet or notification', async () => {
    const wallet = { ...handmadeReceipt(), wallet: bs58.encode(new Uint8Array(32).fill(1)) };
    const id = { ...handmadeReceipt(), notificationId: '01J9ZQ3XK8V7N2M4P6R8T0W2Y5' };
    const garbage = { ...handmadeReceipt(), wallet: 'not-base58-0OIl' };
    for (const receipt of [wallet, id, garbage]) {
      const result = await verifyReceipt(receipt, { groth16: accepting });
      assert.equal(result.valid, false);
      assert.equal(result.checks.publicSignals, false);
    }
  });

  it('fails a tampered path, index, commitment or root', async () => {
    const base = handmadeReceipt();
    const sibling = [...base.merklePath];
    sibling[3] = '0x' + '1'.padStart(64, '0');
    const tampered: Receipt[] = [
      { ...base, merklePath: sibling },
      { ...base, merklePath: base.merklePath.slice(1) },
      { ...base, leafIndex: 4 },
      { ...base, leafIndex: 1024 },
      { ...base, commitment: '0x' + '2'.padStart(64, '0') },
      { ...base, merklePath: [...base.merklePath.slice(0, 9), '0x' + 'f'.repeat(64)] },
    ];
    for (const receipt of tampered) {
      const result = await verifyReceipt(receipt, { groth16: accepting });
      assert.equal(result.checks.merklePath, false, JSON.stringify(receipt.merklePath));
      assert.equal(result.valid, false);
    }
    const root = await verifyReceipt({ ...base, root: '0x' + '3'.padStart(64, '0') }, { groth16: accepting });
    assert.equal(root.checks.merklePath, false);
    assert.equal(root.checks.publicSignals, false);
  });

  it("fails a receipt carrying another leaf of its batch (that leaf's commitment and path): the proof's commitment is another", async () => {
    const base = handmadeReceipt();
    // The leaf beside this one (index 4): its path starts with this leaf and leads to the same root.
    const neighbour = { ...base, commitment: base.merklePath[0], leafIndex: 4, merklePath: [base.commitment, ...base.merklePath.slice(1)] };
    const result = await verifyReceipt(neighbour, { groth16: accepting });
    assert.equal(result.checks.merklePath, true, 'the neighbour is in the batch');
    assert.equal(result.checks.publicSignals, false, 'but it is not the leaf the proof is about');
    assert.equal(result.valid, false);
  });

  it('accepts a receipt proven before the commitment was a signal (four signals), without that binding', async () => {
    const legacy = { ...handmadeReceipt() };
    legacy.publicSignals = legacy.publicSignals.slice(1);
    assert.deepEqual((await verifyReceipt(legacy, { groth16: accepting })).checks.publicSignals, true);
    assert.equal((await verifyReceipt({ ...legacy, publicSignals: legacy.publicSignals.slice(1) }, { groth16: accepting })).checks.publicSignals, false, 'three is not a layout');
  });

  it('never throws on a malformed receipt', async () => {
    const broken = { ...handmadeReceipt(), publicSignals: 'x', merklePath: null, proof: null } as unknown as Receipt;
    const result = await verifyReceipt(broken, { groth16: accepting });
    assert.deepEqual(result.checks, { proof: false, publicSignals: false, merklePath: false, onChain: null, signer: null });
    for (const nothing of [null, undefined, 'receipt', 42]) {
      const answer = await verifyReceipt(nothing as unknown as Receipt, { groth16: accepting });
      assert.deepEqual(answer, { valid: false, checks: { proof: false, publicSignals: false, merklePath: false, onChain: null, signer: null }, errors: ['the receipt is not an object'] });
    }
  });

  it('checks a pinned signer offline: a receipt naming another signer is not valid', async () => {
    const receipt = handmadeReceipt();
    const pinned = await verifyReceipt(receipt, { groth16: accepting, signer: receipt.signer });
    assert.equal(pinned.valid, true);
    assert.equal(pinned.checks.signer, true);
    const other = await verifyReceipt(receipt, { groth16: accepting, signer: '1111111111111111111111111111111111111111111' });
    assert.equal(other.valid, false);
    assert.equal(other.checks.signer, false);
    assert.deepEqual(other.errors, [`the receipt names signer ${receipt.signer}, not 1111111111111111111111111111111111111111111`]);
  });
});

describe('verifyReceipt against an RPC node', () => {
  const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
  const receipt = handmadeReceipt();
  /** What the node answers to the next requests, as raw JSON text. */
  let answer = '';
  let server: Server;
  let rpcUrl: string;

  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(answer));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    rpcUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** A getTransaction result as a node answers it for the receipt's memo transaction. */
  const landed = () => ({
    slot: 7,
    meta: { err: null, fee: 5000 },
    transaction: {
      signatures: [receipt.tx],
      message: {
        accountKeys: [receipt.signer, MEMO_PROGRAM],
        instructions: [{ programIdIndex: 1, accounts: [], data: bs58.encode(Buffer.from(receipt.memo)), stackHeight: null }],
      },
    },
  });
  const ask = async (body: unknown) => {
    answer = typeof body === 'string' ? body : JSON.stringify(body);
    return verifyReceipt(receipt, { groth16: accepting, rpcUrl });
  };

  it('passes a transaction that succeeded, was signed by the signer and carries the memo', async () => {
    const result = await ask({ jsonrpc: '2.0', id: 1, result: landed() });
    assert.deepEqual(result, { valid: true, checks: { proof: true, publicSignals: true, merklePath: true, onChain: true, signer: null }, errors: [] });
  });

  it('fails, without throwing, on a result of any malformed shape and names what is malformed', async () => {
    const base = landed();
    const message = base.transaction.message;
    const withMessage = (change: Record<string, unknown>) => ({ ...base, transaction: { ...base.transaction, message: { ...message, ...change } } });
    const instruction = (change: Record<string, unknown>) => withMessage({ instructions: [{ ...message.instructions[0], ...change }] });
    const cases: [string, unknown, RegExp][] = [
      ['result a string', 'landed', /result is not an object/],
      ['result an array', [base], /result is not an object/],
      ['result false', false, /result is not an object/],
      ['meta missing', { ...base, meta: undefined }, /result\.meta is not an object/],
      ['meta null', { ...base, meta: null }, /result\.meta is not an object/],
      ['meta without err', { ...base, meta: { fee: 5000 } }, /result\.meta\.err is missing/],
      ['transaction missing', { ...base, transaction: undefined }, /result\.transaction\.message is not an object/],
      ['message a string', { ...base, transaction: { message: 'm' } }, /result\.transaction\.message is not an object/],
      ['accountKeys not an array', withMessage({ accountKeys: { 0: receipt.signer } }), /accountKeys is not a non-empty array of addresses/],
      ['accountKeys empty', withMessage({ accountKeys: [] }), /accountKeys is not a non-empty array of addresses/],
      ['accountKeys holding an object', withMessage({ accountKeys: [receipt.signer, { pubkey: MEMO_PROGRAM }] }), /accountKeys is not a non-empty array of addresses/],
      ['instructions an object', withMessage({ instructions: {} }), /instructions is not an array/],
      ['instructions missing', withMessage({ instructions: undefined }), /instructions is not an array/],
      ['instructions [null]', withMessage({ instructions: [null] }), /instructions\[0\] is not an object/],
      ['an instruction a number', withMessage({ instructions: [...message.instructions, 3] }), /instructions\[1\] is not an object/],
      ['programIdIndex out of range', instruction({ programIdIndex: 2 }), /instructions\[0\]\.programIdIndex is not an index into the 2 account keys/],
      ['programIdIndex negative', instruction({ programIdIndex: -1 }), /programIdIndex is not an index/],
      ['programIdIndex fractional', instruction({ programIdIndex: 0.5 }), /programIdIndex is not an index/],
      ['programIdIndex a string', instruction({ programIdIndex: '1' }), /programIdIndex is not an index/],
      ['programIdIndex missing', instruction({ programIdIndex: undefined }), /programIdIndex is not an index/],
      ['data not a string', instruction({ data: [1, 2, 3] }), /instructions\[0\]\.data is not a string/],
      ['data missing', instruction({ data: undefined }), /instructions\[0\]\.data is not a string/],
    ];
    for (const [what, result, reason] of cases) {
      const verification = await ask({ jsonrpc: '2.0', id: 1, result });
      assert.equal(verification.valid, false, what);
      assert.equal(verification.checks.onChain, false, what);
      assert.deepEqual({ ...verification.checks, onChain: null }, { proof: true, publicSignals: true, merklePath: true, onChain: null, signer: null }, what);
      assert.equal(verification.errors.length, 1, what);
      assert.match(verification.errors[0], new RegExp(`^the RPC node's answer for transaction ${receipt.tx} is malformed: `), what);
      assert.match(verification.errors[0], reason, what);
    }
  });

  it('fails, without throwing, on an answer that is not a JSON-RPC response', async () => {
    const cases: [string, unknown, RegExp][] = [
      ['null', 'null', /something other than a JSON-RPC response object/],
      ['an array', [{ result: landed() }], /something other than a JSON-RPC response object/],
      ['a number', '42', /something other than a JSON-RPC response object/],
      ['not JSON', '<html>Bad gateway</html>', /could not be asked/],
      ['neither result nor error', { jsonrpc: '2.0', id: 1 }, /neither a result nor an error/],
      ['an error object', { error: { code: -32601, message: 'Method not found' } }, /answered an error: Method not found$/],
      ['an error without a message', { error: { code: -32000 } }, /answered an error: \{"code":-32000\}$/],
      ['an error string', { error: 'overloaded' }, /answered an error: "overloaded"$/],
    ];
    for (const [what, body, reason] of cases) {
      const verification = await ask(body);
      assert.equal(verification.checks.onChain, false, what);
      assert.equal(verification.valid, false, what);
      assert.match(verification.errors.join(), reason, what);
    }
  });

  it('still tells a missing, failed, foreign or memo-less transaction apart', async () => {
    const base = landed();
    const cases: [string, unknown, RegExp][] = [
      ['not found', null, /was not found on the cluster/],
      ['failed', { ...base, meta: { err: { InstructionError: [0, 'Custom'] } } }, /failed on chain/],
      ['another signer', { ...base, transaction: { message: { ...base.transaction.message, accountKeys: ['1'.repeat(32), MEMO_PROGRAM] } } }, new RegExp(`signed by ${'1'.repeat(32)}, not ${receipt.signer}`)],
      ['no memo', { ...base, transaction: { message: { ...base.transaction.message, instructions: [] } } }, /has no Herald memo naming root/],
      ['a memo that is not base58', { ...base, transaction: { message: { ...base.transaction.message, instructions: [{ programIdIndex: 1, data: '0OIl' }] } } }, /has no Herald memo naming root/],
    ];
    for (const [what, result, reason] of cases) {
      const verification = await ask({ jsonrpc: '2.0', id: 1, result });
      assert.equal(verification.checks.onChain, false, what);
      assert.match(verification.errors.join(), reason, what);
    }
  });
});
