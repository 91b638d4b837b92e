import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { circuitArtifacts, loadVerificationKey } from './circuit-artifacts.js';

describe('circuit artifacts', () => {
  it('ships every file the prover needs, matching the manifest', () => {
    const artifacts = circuitArtifacts();
    for (const file of Object.values(artifacts)) assert.ok(existsSync(file), file);
    const manifest = JSON.parse(readFileSync(path.join(path.dirname(artifacts.zkey), 'manifest.json'), 'utf8'));
    const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
    assert.equal(sha(artifacts.zkey), manifest.zkeySha256);
    assert.equal(sha(artifacts.verificationKey), manifest.verificationKeySha256);
  });

  it('takes configured keys in place of the shipped ones', () => {
    const artifacts = circuitArtifacts({ zkeyPath: '/keys/ceremony.zkey', vkeyPath: '/keys/ceremony.json' });
    assert.equal(artifacts.zkey, '/keys/ceremony.zkey');
    assert.equal(artifacts.verificationKey, '/keys/ceremony.json');
    assert.equal(artifacts.wasmGz, circuitArtifacts().wasmGz);
  });

  it('names a verification key by the hash of its JSON and refuses anything else', () => {
    const shipped = loadVerificationKey(circuitArtifacts().verificationKey);
    assert.match(shipped.id, /^[0-9a-f]{64}$/);
    assert.equal(shipped.key.nPublic, 5, 'commitment, root, notification id and the wallet limbs');
    const dir = mkdtempSync(path.join(tmpdir(), 'herald-vkey-'));
    writeFileSync(path.join(dir, 'plonk.json'), JSON.stringify({ protocol: 'plonk', nPublic: 5 }));
    // a key of the circuit before the commitment was a signal
    writeFileSync(path.join(dir, 'four.json'), JSON.stringify({ ...shipped.key, nPublic: 4 }));
    writeFileSync(path.join(dir, 'text.json'), 'not json');
    for (const file of ['plonk.json', 'four.json']) assert.throws(() => loadVerificationKey(path.join(dir, file)), /not a Groth16 verification key/);
    assert.throws(() => loadVerificationKey(path.join(dir, 'text.json')), SyntaxError);
  });
});
