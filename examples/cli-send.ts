/**
 * CLI from a script: send one notification with `herald notify send --wait --json` (here, telling a
 * wallet its withdrawal was processed), parse the JSON the CLI prints and act on its exit code.
 *
 * - `--json` makes stdout exactly one JSON document and puts errors on stderr as
 *   `{"error": {code, message, exitCode, statusCode?}}`; nothing else is printed and nothing prompts.
 * - `--wait` blocks until the notification is final: exit 0 only when it was delivered; exit 1 with
 *   code `NOT_DELIVERED` (bounced, failed, opted out) or `WAIT_TIMEOUT`, stdout then still holding
 *   `{submission, notification}`.
 * - `--idempotency-key` makes re-running the script safe: a repeat answers `duplicate` with the
 *   first notification's id (and `--wait` follows that one). The CLI retries 5xx and 429 itself.
 * - Exit codes: 0 ok, 1 other, 2 bad usage or input, 3 not found (an unregistered wallet), 4 auth,
 *   5 rate-limited after retries, 6 network. A script can pass them on unchanged, as this one does.
 *
 * Run from the repository root (after `npm run build`, so `herald` is in node_modules/.bin):
 *   PATH="$PWD/node_modules/.bin:$PATH" HERALD_API_KEY=… HERALD_BASE_URL=… HERALD_WALLET=<address> \
 *   WITHDRAWAL_ID=wd-981 node --import tsx examples/cli-send.ts
 * HERALD_CLI overrides the command (e.g. `HERALD_CLI="npx herald"`). Exits with the CLI's code.
 */
import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `herald <args> --json` with the given environment (HERALD_API_KEY, HERALD_BASE_URL, …). */
export function runHerald(args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  const [command, ...prefix] = (env.HERALD_CLI ?? 'herald').trim().split(/\s+/);
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...prefix, ...args, '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/** The `{error}` document the CLI prints on stderr in --json mode. */
export function cliError(run: CliRun): { code: string; message: string; exitCode: number } | undefined {
  try {
    return JSON.parse(run.stderr).error;
  } catch {
    return undefined;
  }
}

export async function main(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (!env.HERALD_WALLET) {
    console.error('Set HERALD_WALLET (and HERALD_API_KEY, HERALD_BASE_URL)');
    return 2;
  }
  const withdrawal = env.WITHDRAWAL_ID ?? 'wd-981';
  const run = await runHerald([
    'notify', 'send',
    '--wallet', env.HERALD_WALLET,
    '--subject', `Withdrawal ${withdrawal} processed`,
    '--body', `Your withdrawal **${withdrawal}** has been sent to your wallet.`,
    '--category', 'defi',
    '--idempotency-key', `withdrawal-processed:${withdrawal}`,
    '--wait', '--wait-timeout', '30s',
  ], env);

  if (run.code === 0) {
    const { submission, notification } = JSON.parse(run.stdout);
    const repeat = submission.status === 'duplicate' ? ' (already sent by an earlier run)' : '';
    console.log(`Delivered ${notification.notification_id} by ${notification.delivery_channel}${repeat}`);
    return 0;
  }
  const error = cliError(run);
  if (error === undefined) {
    console.error(`herald exited ${run.code} without a JSON error: ${run.stderr.trim()}`);
    return run.code;
  }
  if (error.code === 'NOT_DELIVERED' || error.code === 'WAIT_TIMEOUT') {
    const { notification } = JSON.parse(run.stdout);
    console.error(`Notification ${notification.notification_id} is ${notification.status}: ${error.message}`);
  } else if (run.code === 3) {
    console.error(`${env.HERALD_WALLET} is not registered with Herald: nothing sent (${error.code})`);
  } else if (run.code === 4) {
    console.error(`Check HERALD_API_KEY: ${error.message}`);
  } else {
    console.error(`herald failed with exit code ${run.code}: ${error.code}: ${error.message}`);
  }
  return run.code;
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  main().then(
    (code) => (process.exitCode = code),
    (error) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
