#!/usr/bin/env node
// Rebuilds the receipt circuit's shipped artifacts in build/:
//   node packages/server/circuits/build-circuit.mjs            compile receipt.circom -> build/receipt.wasm.gz
//                                                              and build/witness_calculator.cjs
//   node packages/server/circuits/build-circuit.mjs --setup    also a fresh development trusted setup
//                                                              (Powers of Tau 2^12 + one phase-2 contribution)
// The setup takes minutes and its output differs on every run (fresh randomness): after --setup,
// every receipt proven with the old zkey needs the old verification key. Nothing is downloaded.
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const out = path.join(here, 'build');
const POWER = 12;
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

// circom2 runs as WASI with the working directory's ancestors pre-opened: run it from the repo root.
function compile(work) {
  execFileSync(
    process.execPath,
    [
      'node_modules/circom2/cli.js',
      path.relative(root, path.join(here, 'receipt.circom')),
      '--O2',
      '--r1cs',
      '--wasm',
      '-l',
      'node_modules/circomlib/circuits',
      '-o',
      path.relative(root, work),
    ],
    { cwd: root, stdio: 'inherit' },
  );
  return {
    r1cs: path.join(work, 'receipt.r1cs'),
    wasm: path.join(work, 'receipt_js', 'receipt.wasm'),
    witnessCalculator: path.join(work, 'receipt_js', 'witness_calculator.js'),
  };
}

async function setup(r1cs, work) {
  const snarkjs = await import('snarkjs');
  const curve = await snarkjs.curves.getCurveFromName('bn128');
  const entropy = () => randomBytes(64).toString('hex');
  const file = (name) => path.join(work, name);
  console.log(`powers of tau 2^${POWER} (development, one contribution)`);
  await snarkjs.powersOfTau.newAccumulator(curve, POWER, file('pot0.ptau'));
  await snarkjs.powersOfTau.contribute(file('pot0.ptau'), file('pot1.ptau'), 'herald development', entropy());
  console.log('preparing phase 2 (the slow part)');
  await snarkjs.powersOfTau.preparePhase2(file('pot1.ptau'), file('pot.ptau'));
  console.log('groth16 setup and one phase-2 contribution');
  await snarkjs.zKey.newZKey(r1cs, file('pot.ptau'), file('receipt0.zkey'));
  await snarkjs.zKey.contribute(file('receipt0.zkey'), path.join(out, 'receipt.zkey'), 'herald development', entropy());
  const vkey = await snarkjs.zKey.exportVerificationKey(path.join(out, 'receipt.zkey'));
  writeFileSync(path.join(out, 'verification_key.json'), JSON.stringify(vkey, null, 1) + '\n');
  await curve.terminate();
}

async function main() {
  const withSetup = process.argv.includes('--setup');
  const work = mkdtempSync(path.join(tmpdir(), 'herald-circuit-'));
  try {
    mkdirSync(out, { recursive: true });
    const { r1cs, wasm, witnessCalculator } = compile(work);
    writeFileSync(path.join(out, 'receipt.wasm.gz'), gzipSync(readFileSync(wasm), { level: 9 }));
    // circom's generated loader for the wasm (CommonJS, no dependencies).
    writeFileSync(path.join(out, 'witness_calculator.cjs'), readFileSync(witnessCalculator));
    if (withSetup) await setup(r1cs, work);
    const manifest = {
      circuit: 'receipt.circom',
      depth: 10,
      publicSignals: ['commitment', 'root', 'notificationId', 'walletHi', 'walletLo'],
      r1csSha256: sha256(readFileSync(r1cs)),
      wasmSha256: sha256(readFileSync(wasm)),
      zkeySha256: sha256(readFileSync(path.join(out, 'receipt.zkey'))),
      verificationKeySha256: sha256(readFileSync(path.join(out, 'verification_key.json'))),
      setup: `development only: Powers of Tau 2^${POWER} and one phase-2 contribution, generated locally by build-circuit.mjs`,
    };
    writeFileSync(path.join(out, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
    console.log(manifest);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
