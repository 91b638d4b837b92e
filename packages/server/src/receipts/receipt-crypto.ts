import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CircuitArtifacts } from './circuit-artifacts.js';
import type { LeafFields } from './field-encoding.js';
import type { CryptoRequest, ProofRequest } from './receipt-crypto-process.js';

export interface Groth16Proof {
  proof: Record<string, unknown>;
  publicSignals: string[];
}

const fromSource = import.meta.url.endsWith('.ts');
const CHILD = fileURLToPath(new URL(`./receipt-crypto-process${fromSource ? '.ts' : '.js'}`, import.meta.url));
// Run from source (tests, benchmarks) the child needs tsx's loader; built, plain node. Nothing else
// of this process's flags (--test, --inspect, …) is passed on.
const CHILD_FLAGS = fromSource ? ['--import', import.meta.resolve('tsx')] : [];

/**
 * The gateway's handle on the receipt child process (hashing and proving). The child starts on
 * the first call, so a gateway that never writes a receipt never loads snarkjs; a child that dies
 * fails its pending calls and is replaced on the next one.
 */
export class ReceiptCrypto {
  private child: ChildProcess | undefined;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private nextId = 1;

  constructor(private readonly artifacts: CircuitArtifacts) {}

  /** Loads the prover, which refuses a verification key that does not match the proving key. */
  async checkKeys(): Promise<void> {
    await this.call({ op: 'check', args: null });
  }

  /** Poseidon leaf of each receipt's fields. */
  leaves(fields: LeafFields[]): Promise<bigint[]> {
    return this.call({ op: 'leaves', args: fields }) as Promise<bigint[]>;
  }

  /** The batch's Merkle root and every leaf's path. */
  tree(leaves: bigint[]): Promise<{ root: bigint; paths: bigint[][] }> {
    return this.call({ op: 'tree', args: leaves }) as Promise<{ root: bigint; paths: bigint[][] }>;
  }

  prove(request: ProofRequest): Promise<Groth16Proof> {
    return this.call({ op: 'prove', args: request }) as Promise<Groth16Proof>;
  }

  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill();
    await exited;
  }

  private call(request: CryptoRequest): Promise<unknown> {
    const child = this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      child.send({ id, ...request });
    });
  }

  private start(): ChildProcess {
    if (this.child) return this.child;
    // `advanced` serialization carries bigints and typed arrays.
    const child = fork(CHILD, [JSON.stringify(this.artifacts)], { execArgv: CHILD_FLAGS, serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.on('message', (message: { id: number; result?: unknown; error?: string }) => {
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id);
      if (message.error !== undefined) waiting.reject(new Error(message.error));
      else waiting.resolve(message.result);
    });
    const failAll = (error: Error) => {
      if (this.child === child) this.child = undefined;
      for (const { reject } of this.pending.values()) reject(error);
      this.pending.clear();
    };
    child.on('error', failAll);
    child.on('exit', (code, signal) => failAll(new Error(`the receipt prover process exited (${signal ?? `code ${code}`})`)));
    this.child = child;
    return child;
  }
}
