/**
 * A local Solana JSON-RPC server (node:http) backed by litesvm: transactions sent to it really
 * execute (signatures checked, the memo program run, fees charged). It answers the methods the
 * gateway's @solana/kit client and the SDK's verifier use, with mainnet's response shapes.
 * `failSends(n)` makes the next n sendTransaction calls fail as an overloaded node would;
 * `landThenFailSends(n)` runs them but answers an error (a node that timed out on its way back);
 * `hangSends(n)` never answers them and drops the transaction; `holdSends(n)` accepts them but
 * lands them only at `landHeld()` (a congested cluster); `advance(blocks)` moves the block height
 * on, as time passing would, expiring blockhashes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import bs58 from 'bs58';
import { FailedTransactionMetadata, LiteSVM } from 'litesvm';
import { address, getCompiledTransactionMessageDecoder, getTransactionDecoder, lamports } from '@solana/kit';

interface Landed {
  slot: number;
  wire: Uint8Array;
  logs: string[];
  computeUnits: bigint;
}

export interface SolanaRpc {
  url: string;
  svm: LiteSVM;
  /** Every method called, in order. */
  calls: string[];
  /** The next `count` sends fail with `error` (default: -32005, a node that is behind). */
  failSends(count: number, error?: { code: number; message: string }): void;
  landThenFailSends(count: number): void;
  hangSends(count: number): void;
  holdSends(count: number): void;
  landHeld(): void;
  advance(blocks: number): void;
  /** The memo of every transaction that landed, in order. */
  memos(): string[];
  airdrop(to: string, sol: number): void;
  close(): Promise<void>;
}

const rpcError = (code: number, message: string) => ({ error: { code, message } });

/** The first of Solana's fieldless transaction errors, by their number in litesvm. */
const FIELDLESS_ERRORS = ['AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'ProgramAccountNotFound', 'InsufficientFundsForFee'];

export async function startSolanaRpc(): Promise<SolanaRpc> {
  const svm = new LiteSVM();
  const landed = new Map<string, Landed>();
  const calls: string[] = [];
  let slot = 1;
  let failing = 0;
  let failure = { code: -32005, message: 'Node is behind by 42 slots' };
  let landThenFailing = 0;
  let hanging = 0;
  let holding = 0;
  const held: string[] = [];
  let height = 0;

  function sendTransaction(base64: string) {
    if (failing > 0) {
      failing--;
      return rpcError(failure.code, failure.message);
    }
    if (holding > 0) {
      holding--;
      held.push(base64);
      const transaction = getTransactionDecoder().decode(Buffer.from(base64, 'base64'));
      return { result: bs58.encode(Object.values(transaction.signatures)[0] as Uint8Array) };
    }
    const wire = Buffer.from(base64, 'base64');
    const transaction = getTransactionDecoder().decode(wire);
    const signature = bs58.encode(Object.values(transaction.signatures)[0] as Uint8Array);
    const result = svm.sendTransaction(transaction);
    if (result instanceof FailedTransactionMetadata) {
      // As a node answers a failed preflight: the transaction error and the logs in `data`.
      const err = result.err();
      const data = { err: typeof err === 'number' ? (FIELDLESS_ERRORS[err] ?? 'SanitizeFailure') : { InstructionError: [0, 'GenericError'] }, logs: result.meta().logs(), accounts: null, unitsConsumed: 0, returnData: null };
      return { error: { code: -32002, message: `Transaction simulation failed: ${data.err}`, data } };
    }
    slot++;
    landed.set(signature, { slot, wire, logs: result.logs(), computeUnits: result.computeUnitsConsumed() });
    svm.expireBlockhash();
    if (landThenFailing > 0) {
      landThenFailing--;
      return rpcError(-32603, 'Internal error: timed out');
    }
    return { result: signature };
  }

  /** The memo instruction's text of a landed transaction. */
  function memoOf(tx: Landed): string {
    const decoded = getTransactionDecoder().decode(tx.wire);
    const message = getCompiledTransactionMessageDecoder().decode(decoded.messageBytes) as any;
    return message.instructions.map((ix: any) => Buffer.from(ix.data ?? []).toString('utf8')).join('');
  }

  function getTransaction(signature: string) {
    const tx = landed.get(signature);
    if (!tx) return { result: null };
    const decoded = getTransactionDecoder().decode(tx.wire);
    const message = getCompiledTransactionMessageDecoder().decode(decoded.messageBytes) as any;
    return {
      result: {
        slot: tx.slot,
        blockTime: Math.floor(Date.now() / 1000),
        version: message.version,
        transaction: {
          signatures: Object.values(decoded.signatures).map((s) => bs58.encode(s as Uint8Array)),
          message: {
            accountKeys: message.staticAccounts,
            header: {
              numRequiredSignatures: message.header.numSignerAccounts,
              numReadonlySignedAccounts: message.header.numReadonlySignerAccounts,
              numReadonlyUnsignedAccounts: message.header.numReadonlyNonSignerAccounts,
            },
            recentBlockhash: message.lifetimeToken,
            instructions: message.instructions.map((ix: any) => ({
              programIdIndex: ix.programAddressIndex,
              accounts: ix.accountIndices ?? [],
              data: bs58.encode(ix.data ?? new Uint8Array()),
              stackHeight: null,
            })),
            addressTableLookups: [],
          },
        },
        meta: {
          err: null,
          status: { Ok: null },
          fee: 5000,
          preBalances: [],
          postBalances: [],
          innerInstructions: [],
          logMessages: tx.logs,
          loadedAddresses: { writable: [], readonly: [] },
          computeUnitsConsumed: Number(tx.computeUnits),
        },
      },
    };
  }

  function answer(method: string, params: any[]): object {
    const context = { slot };
    switch (method) {
      case 'getLatestBlockhash':
        return { result: { context, value: { blockhash: svm.latestBlockhash(), lastValidBlockHeight: slot + height + 150 } } };
      case 'getBlockHeight':
        return { result: slot + height };
      case 'sendTransaction':
        return sendTransaction(params[0]);
      case 'getSignatureStatuses':
        return {
          result: {
            context,
            value: (params[0] as string[]).map((s) => {
              const tx = landed.get(s);
              return tx ? { slot: tx.slot, confirmations: null, err: null, status: { Ok: null }, confirmationStatus: 'finalized' } : null;
            }),
          },
        };
      case 'getTransaction':
        return getTransaction(params[0]);
      case 'getBalance':
        return { result: { context, value: Number(svm.getBalance(address(params[0])) ?? 0n) } };
      default:
        return rpcError(-32601, `Method not found: ${method}`);
    }
  }

  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      let reply: object;
      let id: unknown = null;
      try {
        const request = JSON.parse(body);
        id = request.id;
        calls.push(request.method);
        if (request.method === 'sendTransaction' && hanging > 0) {
          hanging--;
          return; // no answer, and the transaction is dropped
        }
        reply = answer(request.method, request.params ?? []);
      } catch (error) {
        reply = rpcError(-32700, `Parse error: ${(error as Error).message}`);
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, ...reply }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    svm,
    calls,
    failSends(count, error = { code: -32005, message: 'Node is behind by 42 slots' }) {
      failing = count;
      failure = error;
    },
    landThenFailSends(count) {
      landThenFailing = count;
    },
    hangSends(count) {
      hanging = count;
    },
    holdSends(count) {
      holding = count;
    },
    landHeld() {
      for (const base64 of held.splice(0)) sendTransaction(base64);
    },
    advance(blocks) {
      height += blocks;
      svm.expireBlockhash();
    },
    memos: () => [...landed.values()].map(memoOf),
    airdrop(to, sol) {
      svm.airdrop(address(to), lamports(BigInt(Math.round(sol * 1e9))));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
